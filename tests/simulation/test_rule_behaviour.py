"""Rule behaviour: plans drawn from the persona's rates, seeded; statistical checks over many
seeded draws (each test well under a second)."""

from __future__ import annotations

import numpy as np
import pytest

from voxeval.simulation.caller_behaviour import CallerBehaviour
from voxeval.simulation.personas import BACKCHANNELS, PAUSE_RANGE_S, get_persona
from voxeval.simulation.rule_behaviour import (
    BACKCHANNEL_EDGE_S,
    BACKCHANNEL_GAP_S,
    RuleBehaviour,
    is_number_or_code,
)

ANSWER = "Sure, my member ID is KX4, and my date of birth is March third. That's all, thanks."
# five clause boundaries (after "Well," "week," "back." and both "waited,"), no code or number
CLAUSES = "Well, I called last week, and nobody rang back. I waited, and waited, and called again."
DRAWS = 400


def barge_ins(persona: str, duration_s: float = 10.0) -> list[float]:
    behaviour = RuleBehaviour(persona, seed=7)
    plans = [behaviour.listening_plan("agent words", duration_s) for _ in range(DRAWS)]
    return [p.barge_in.at_s for p in plans if p.barge_in is not None]


def pauses(persona: str, text: str = ANSWER) -> list[tuple[float, ...]]:
    behaviour = RuleBehaviour(persona, seed=11)
    return [behaviour.speaking_plan(text).pauses_s for _ in range(DRAWS)]


def test_rule_behaviour_meets_the_contract_and_keeps_the_words() -> None:
    behaviour = RuleBehaviour("forgetful_disorganized", seed=3)
    assert isinstance(behaviour, CallerBehaviour)
    for _ in range(50):
        plan = behaviour.speaking_plan(ANSWER)
        assert plan.text == ANSWER
        assert len(plan.pauses_s) == len(plan.pieces) - 1


def test_explicit_markers_always_pause_even_for_a_persona_that_rarely_pauses() -> None:
    behaviour = RuleBehaviour("aggressive_impatient", seed=0)
    for _ in range(100):
        plan = behaviour.speaking_plan("Look... I told you... KX4")
        assert plan.pieces[0] == "Look" and len(plan.pauses_s) >= 2
        assert plan.text.replace(" ", "") == "LookItoldyouKX4"
        assert all(PAUSE_RANGE_S[0] <= p <= PAUSE_RANGE_S[1] for p in plan.pauses_s)


def test_aggressive_caller_barges_in_far_more_often_and_earlier_than_default() -> None:
    aggressive, default = barge_ins("aggressive_impatient"), barge_ins("default")
    rate = get_persona("aggressive_impatient").barge_in_rate
    # binomial(400, 0.5): 3 standard deviations are 30 draws
    assert abs(len(aggressive) - rate * DRAWS) < 30
    assert len(default) < 0.06 * DRAWS < len(aggressive)
    # Beta(2, 3) puts the aggressive cut at 40 % of the utterance on average, default late
    assert 3.4 < float(np.mean(aggressive)) < 4.6
    assert all(1.0 <= t <= 9.7 for t in aggressive)
    assert not barge_ins("elderly_slow")


def test_no_barge_in_into_utterances_shorter_than_the_persona_minimum() -> None:
    minimum = get_persona("aggressive_impatient").barge_in_min_s
    assert not barge_ins("aggressive_impatient", duration_s=minimum - 0.1)


def test_elderly_caller_pauses_more_often_and_longer_than_default() -> None:
    elderly = [p for plan in pauses("elderly_slow", CLAUSES) for p in plan]
    default = [p for plan in pauses("default", CLAUSES) for p in plan]
    # per boundary: default 0.05, elderly 0.35 (binomial over 2,000 boundaries: sd ~0.011)
    assert len(elderly) > 4 * len(default)
    assert abs(len(elderly) / (5 * DRAWS) - 0.35) < 0.04
    assert abs(len(default) / (5 * DRAWS) - 0.05) < 0.02
    assert np.median(elderly) > 1.8 * np.median(default)
    assert 0.95 < float(np.median(elderly)) < 1.25  # the persona's 1.1 s log-normal median


def test_forgetful_caller_pauses_before_codes_and_numbers() -> None:
    behaviour = RuleBehaviour("forgetful_disorganized", seed=5)
    text = "My member ID is KX4 and my phone is five five five two"
    starts = [behaviour.speaking_plan(text).pieces for _ in range(DRAWS)]
    before_code = sum(any(p.startswith("KX4") for p in pieces[1:]) for pieces in starts)
    before_digits = sum(any(p.startswith("five five") for p in pieces[1:]) for pieces in starts)
    assert abs(before_code / DRAWS - 0.7) < 0.08 and abs(before_digits / DRAWS - 0.7) < 0.08
    # never inside a run of digits: "five | five" is the same number
    assert not any(p == "five" or p.startswith("five two") for s in starts for p in s)
    default = RuleBehaviour("default", seed=5)
    assert all(len(default.speaking_plan(text).pieces) == 1 for _ in range(100))


@pytest.mark.parametrize(
    ("word", "expected"),
    [("KX4,", True), ("1990-02-03.", True), ("ABQ", True), ("five", True), ("cinco", True)],
)
def test_numbers_and_codes_are_recognised(word: str, expected: bool) -> None:
    assert is_number_or_code(word) is expected
    assert not is_number_or_code("member") and not is_number_or_code("ID")


def test_backchannels_follow_the_rate_and_stay_inside_the_utterance() -> None:
    behaviour = RuleBehaviour("elderly_slow", seed=2)
    duration = 12.0
    plans = [behaviour.listening_plan("agent words", duration) for _ in range(DRAWS)]
    times = [b.at_s for p in plans for b in p.backchannels]
    assert all(BACKCHANNEL_EDGE_S <= t <= duration - BACKCHANNEL_EDGE_S for t in times)
    for plan in plans:
        gaps = np.diff([b.at_s for b in plan.backchannels])
        assert all(g >= BACKCHANNEL_GAP_S for g in gaps)
    # Poisson(0.15/s x 11 s) = 1.65 per utterance before thinning; thinning drops a few
    mean = len(times) / DRAWS
    assert 1.2 < mean < 1.75
    aggressive = RuleBehaviour("aggressive_impatient", seed=2)
    calm = [aggressive.listening_plan("x", duration).backchannels for _ in range(DRAWS)]
    assert sum(map(len, calm)) < 0.3 * len(times)
    assert not RuleBehaviour("elderly_slow").listening_plan("x", 1.0).backchannels


def test_backchannels_stop_before_a_barge_in() -> None:
    behaviour = RuleBehaviour("aggressive_impatient", seed=4)
    for _ in range(DRAWS):
        plan = behaviour.listening_plan("x", 20.0)
        if plan.barge_in is not None:
            assert all(b.at_s <= plan.barge_in.at_s - BACKCHANNEL_EDGE_S for b in plan.backchannels)


def test_spanish_calls_backchannel_in_spanish() -> None:
    behaviour = RuleBehaviour("elderly_slow", language="es-MX", seed=1)
    said = {b.text for _ in range(100) for b in behaviour.listening_plan("x", 15.0).backchannels}
    assert said and said <= set(BACKCHANNELS["es"])
    assert "ajá" in said or "claro" in said or "vale" in said or "sí" in said
    french = RuleBehaviour("elderly_slow", language="fr", seed=1)
    said_fr = {b.text for _ in range(50) for b in french.listening_plan("x", 15.0).backchannels}
    assert said_fr == {"mhm"}


def test_same_seed_same_plans_other_seed_other_plans() -> None:
    def run(seed: int) -> list[object]:
        behaviour = RuleBehaviour("forgetful_disorganized", seed=seed)
        out: list[object] = []
        for i in range(30):
            out.append(behaviour.speaking_plan(ANSWER))
            out.append(behaviour.listening_plan("x", 6.0 + i % 5))
        return out

    assert run(9) == run(9)
    assert run(9) != run(10)


def test_speaking_draws_do_not_move_the_listening_plans() -> None:
    quiet = RuleBehaviour("forgetful_disorganized", seed=8)
    chatty = RuleBehaviour("forgetful_disorganized", seed=8)
    for _ in range(5):
        chatty.speaking_plan(ANSWER)
    assert [quiet.listening_plan("x", 9.0) for _ in range(20)] == [
        chatty.listening_plan("x", 9.0) for _ in range(20)
    ]
