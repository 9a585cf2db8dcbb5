"""EVA-A / EVA-X composites from hand-built score rows: golden pass rules, pass@k by hand,
unclaimed composites with their reasons, system-fault trials and the offline ASR proxy."""

from __future__ import annotations

from typing import Any

import pytest

from voxeval.analysis.calls.composite_summary import eva_composites
from voxeval.analysis.calls.eva_composites import (
    EVA_A,
    EVA_A_ASR_PROXY,
    EVA_X,
    TrialScores,
    judge_trial,
)
from voxeval.store.records import ScoreRow, UnitRecord

# Values that pass every component of every composite, exactly on the thresholds.
ON_THRESHOLD = {
    "task_completion": 1.0,
    "faithfulness": 0.5,
    "agent_speech_fidelity": 0.95,
    "agent_speech_fidelity_asr": 0.95,
    "conversation_progression": 0.5,
    "turn_taking": 0.8,
    "conciseness": 0.5,
}


def score_row(
    scenario: str,
    trial: int,
    metric: str,
    value: float | None,
    *,
    condition: str = "clean",
    error: str | None = None,
    pending: bool = False,
    details: dict[str, Any] | None = None,
) -> ScoreRow:
    return ScoreRow(
        item_id=scenario,
        system="sut",
        trial=trial,
        condition=condition,
        category="c",
        metric=metric,
        value=value,
        passed=None,
        error=error,
        details=details or {},
        pending=pending,
    )


def trial_rows(
    scenario: str, trial: int, condition: str = "clean", **values: float | None
) -> list[ScoreRow]:
    """Every component scored on one trial: ``ON_THRESHOLD`` with ``values`` replacing it."""
    merged = {**ON_THRESHOLD, **values}
    return [score_row(scenario, trial, m, v, condition=condition) for m, v in merged.items()]


def unit(
    scenario: str,
    trial: int,
    status: str = "done",
    condition: str = "clean",
    **extra: Any,
) -> UnitRecord:
    return UnitRecord(scenario, "sut", trial, condition, "c", status, **extra)


def one_trial(**values: float | None) -> TrialScores:
    rows = {r.metric: r for r in trial_rows("s", 0, **values)}
    return TrialScores("s", "clean", 0, rows=rows)


# -------------------------------------------------------------------- golden pass rules


def test_definitions_use_the_metric_thresholds() -> None:
    assert EVA_A.definition == (
        "a trial passes when task_completion == 1 and faithfulness >= 0.5 and "
        "agent_speech_fidelity >= 0.95"
    )
    assert EVA_X.definition == (
        "a trial passes when conversation_progression >= 0.5 and turn_taking >= 0.8 and "
        "conciseness >= 0.5"
    )
    assert EVA_A_ASR_PROXY.metrics == (
        "task_completion",
        "faithfulness",
        "agent_speech_fidelity_asr",
    )
    assert "NOT EVA-A" in EVA_A_ASR_PROXY.note and "not EVA-A" in EVA_A_ASR_PROXY.label


def test_every_component_on_its_threshold_passes() -> None:
    for composite in (EVA_A, EVA_X, EVA_A_ASR_PROXY):
        assert judge_trial(composite, one_trial()).passed is True


def test_a_judge_mean_a_rounding_error_below_the_threshold_still_passes() -> None:
    # (1 + 0 + 0.5) / 3 and similar means land a hair under 0.5 in floating point
    assert judge_trial(EVA_X, one_trial(conciseness=0.5 - 1e-12)).passed is True


@pytest.mark.parametrize(
    ("composite", "metric", "value"),
    [
        (EVA_A, "task_completion", 0.0),
        (EVA_A, "faithfulness", 0.49),
        (EVA_A, "agent_speech_fidelity", 0.949),
        (EVA_X, "conversation_progression", 0.49),
        (EVA_X, "turn_taking", 0.799),
        (EVA_X, "conciseness", 0.4999),
        (EVA_A_ASR_PROXY, "agent_speech_fidelity_asr", 0.94),
    ],
)
def test_one_component_just_under_its_threshold_fails_the_trial(
    composite: Any, metric: str, value: float
) -> None:
    verdict = judge_trial(composite, one_trial(**{metric: value}))
    assert verdict.passed is False and not verdict.missing


def test_task_completion_must_be_exactly_one() -> None:
    assert judge_trial(EVA_A, one_trial(task_completion=0.99)).passed is False


def test_the_other_composites_ignore_a_foreign_component() -> None:
    # the audio judge's verdict does not touch the proxy, the ASR's does not touch EVA-A
    assert judge_trial(EVA_A_ASR_PROXY, one_trial(agent_speech_fidelity=0.0)).passed is True
    assert judge_trial(EVA_A, one_trial(agent_speech_fidelity_asr=0.0)).passed is True
    assert judge_trial(EVA_X, one_trial(task_completion=0.0)).passed is True


# -------------------------------------------------------------------- pass@k by hand


def test_pass_at_k_and_pass_hat_k_by_hand() -> None:
    # scenario a: trials pass, fail, pass (c=2 of n=3); scenario b: all three fail (c=0)
    rows = [
        *trial_rows("a", 0),
        *trial_rows("a", 1, turn_taking=0.5),
        *trial_rows("a", 2),
        *(r for t in range(3) for r in trial_rows("b", t, conciseness=0.0)),
    ]
    units = [unit(s, t) for s in ("a", "b") for t in range(3)]
    entry = eva_composites(rows, units, seed=3)["eva_x"]
    assert entry["claimed"] is True and entry["missing"] == {} and entry["not_scored"] == {}
    clean = entry["by_condition"]["clean"]
    assert (clean["n_scenarios"], clean["n_trials"], clean["trials"]) == (2, 3, 6)
    assert clean["passed_trials"] == 2
    # a: pass@1 2/3, pass@2 1 - C(1,2)/C(3,2) = 1, pass@3 1; pass^2 C(2,2)/C(3,2) = 1/3,
    # pass^3 0.  b: all zero.  Mean over the two scenarios.
    assert [p["mean"] for p in clean["pass_at_k"]] == pytest.approx([1 / 3, 1 / 2, 1 / 2])
    assert [p["mean"] for p in clean["pass_hat_k"]] == pytest.approx([1 / 3, 1 / 6, 0.0])
    assert [p["k"] for p in clean["pass_at_k"]] == [1, 2, 3]
    assert clean["pass_at_1"]["mean"] == pytest.approx(1 / 3)
    assert clean["pass_at_1"]["n"] == 2  # one value per scenario: CIs resample scenarios
    assert clean["pass_at_1"]["ci_low"] <= 1 / 3 <= clean["pass_at_1"]["ci_high"]


def test_each_condition_has_its_own_curves() -> None:
    rows = [*trial_rows("a", 0), *trial_rows("a", 0, "noise", faithfulness=0.0)]
    units = [unit("a", 0), unit("a", 0, condition="noise")]
    entry = eva_composites(rows, units)["eva_a"]
    assert entry["claimed"] is True
    assert list(entry["by_condition"]) == ["clean", "noise"]
    assert entry["by_condition"]["clean"]["pass_at_1"]["mean"] == 1.0
    assert entry["by_condition"]["noise"]["pass_at_1"]["mean"] == 0.0


def test_the_same_seed_gives_the_same_intervals() -> None:
    rows = [r for s in "abcd" for t in range(2) for r in trial_rows(s, t, turn_taking=t * 0.9)]
    first = eva_composites(rows, seed=7)["eva_x"]
    assert first == eva_composites(rows, seed=7)["eva_x"]


# -------------------------------------------------------------------- unclaimed


def test_a_component_that_did_not_run_makes_the_composite_unclaimed_with_its_reason() -> None:
    no_judge = "no audio judge configured (audio_judge:)"
    rows = [r for t in range(2) for r in trial_rows("a", t) if r.metric != "agent_speech_fidelity"]
    rows += [score_row("a", t, "agent_speech_fidelity", None, error=no_judge) for t in range(2)]
    entry = eva_composites(rows, [unit("a", 0), unit("a", 1)])["eva_a"]
    assert entry["claimed"] is False
    assert entry["missing"] == {"agent_speech_fidelity": {"trials": 2, "reasons": {no_judge: 2}}}
    clean = entry["by_condition"]["clean"]
    assert clean["claimed"] is False
    # never a partial composite: no number at all for the condition
    assert clean["pass_at_1"] is None and clean["pass_at_k"] == [] and clean["pass_hat_k"] == []
    assert (clean["trials"], clean["n_trials"], clean["passed_trials"]) == (2, 2, None)
    # the other composites are unaffected
    assert eva_composites(rows)["eva_x"]["claimed"] is True


def test_a_component_missing_on_one_trial_only_still_blocks_the_condition() -> None:
    rows = [*trial_rows("a", 0), *trial_rows("a", 1)]
    rows = [r for r in rows if not (r.trial == 1 and r.metric == "conciseness")]
    rows.append(score_row("a", 1, "conciseness", None, error="judge down", pending=True))
    entry = eva_composites(rows)["eva_x"]
    assert entry["claimed"] is False
    assert entry["missing"]["conciseness"] == {
        "trials": 1,
        "reasons": {"pending retry: judge down": 1},
    }


def test_a_component_never_scored_in_the_run_is_named() -> None:
    rows = [r for r in trial_rows("a", 0) if r.metric != "faithfulness"]
    entry = eva_composites(rows)["eva_a"]
    reason = "no score stored: the run did not score this metric (it needs a judge: set `judge:`)"
    assert entry["missing"] == {"faithfulness": {"trials": 1, "reasons": {reason: 1}}}


def test_a_trial_that_failed_on_our_side_is_not_scored_and_blocks_its_condition() -> None:
    rows = [*trial_rows("a", 0), *trial_rows("a", 0, "noise")]
    units = [
        unit("a", 0),
        unit("a", 1, status="failed", cause="simulator", error="caller LLM down"),
        unit("a", 0, condition="noise"),
    ]
    entry = eva_composites(rows, units)["eva_x"]
    assert entry["claimed"] is False
    clean, noise = entry["by_condition"]["clean"], entry["by_condition"]["noise"]
    assert clean["claimed"] is False and clean["pass_at_1"] is None
    assert clean["not_scored"] == {
        "trials": 1,
        "reasons": {"failed on our side (simulator): caller LLM down": 1},
    }
    assert noise["claimed"] is True and noise["pass_at_1"]["mean"] == 1.0
    assert entry["not_scored"]["trials"] == 1 and "incomplete" in entry["not_scored"]["note"]


def test_a_unit_not_run_yet_is_not_scored() -> None:
    entry = eva_composites([], [unit("a", 0, status="planned")])["eva_a"]
    assert entry["claimed"] is False
    assert entry["not_scored"]["reasons"] == {"not run yet (planned)": 1}


def test_rows_of_two_systems_are_refused() -> None:
    other = UnitRecord("a", "other", 0, "clean", "c", "done")
    with pytest.raises(ValueError, match="one system"):
        eva_composites(trial_rows("a", 0), [other])


def test_no_trials_claims_nothing() -> None:
    entry = eva_composites([], [])["eva_x"]
    assert entry["claimed"] is False and entry["by_condition"] == {}
    assert entry["reason"] == "no trials of this system"


# -------------------------------------------------------------------- system faults


def test_a_system_fault_trial_is_a_failed_trial() -> None:
    fault = {"system_fault": "timeout"}
    faulted = [
        score_row("a", 1, "task_completion", 0.0, details=fault),
        score_row("a", 1, "faithfulness", 0.0, details=fault),
        score_row("a", 1, "agent_speech_fidelity", 0.0, details=fault),
        score_row("a", 1, "conversation_progression", 1.0, details=fault),  # partial call
        score_row("a", 1, "turn_taking", 1.0, details=fault),
        score_row("a", 1, "conciseness", 1.0, details=fault),
    ]
    rows = [*trial_rows("a", 0), *faulted]
    units = [unit("a", 0), unit("a", 1, system_fault="timeout")]
    result = eva_composites(rows, units)
    for name in ("eva_a", "eva_x"):
        clean = result[name]["by_condition"]["clean"]
        assert result[name]["claimed"] is True
        assert (clean["trials"], clean["passed_trials"], clean["system_fault_trials"]) == (2, 1, 1)
        assert clean["pass_at_1"]["mean"] == 0.5


def test_a_system_fault_is_read_from_the_scores_without_unit_records() -> None:
    rows = [score_row("a", 0, "task_completion", 0.0, details={"system_fault": "crash"})]
    clean = eva_composites(rows)["eva_a"]["by_condition"]["clean"]
    assert clean["claimed"] is True and clean["system_fault_trials"] == 1
    assert clean["pass_at_1"]["mean"] == 0.0


# -------------------------------------------------------------------- ASR proxy


def test_the_asr_proxy_is_claimed_offline_while_eva_a_is_not() -> None:
    no_judge = "no audio judge configured"
    rows = [
        *(r for r in trial_rows("a", 0) if r.metric != "agent_speech_fidelity"),
        score_row("a", 0, "agent_speech_fidelity", None, error=no_judge),
        *(r for r in trial_rows("b", 0, agent_speech_fidelity_asr=0.5)
          if r.metric != "agent_speech_fidelity"),
        score_row("b", 0, "agent_speech_fidelity", None, error=no_judge),
    ]  # fmt: skip
    result = eva_composites(rows)
    assert result["eva_a"]["claimed"] is False
    proxy = result["eva_a_asr_proxy"]
    assert proxy["claimed"] is True
    assert proxy["label"] == "EVA-A ASR proxy (not EVA-A)" and "NOT EVA-A" in proxy["note"]
    assert proxy["by_condition"]["clean"]["pass_at_1"]["mean"] == 0.5  # b misses an entity
    assert [c["metric"] for c in proxy["components"]][-1] == "agent_speech_fidelity_asr"
