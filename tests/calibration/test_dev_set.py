"""The development sets: the expected labels, and each defect really is in its record while
the rest of the call stays consistent (turns numbered in order, events in time order)."""

from __future__ import annotations

import re

import pytest

from voxeval.calibration.dev_set import CLEAN, CalibrationExample, DevSet, build_dev_set
from voxeval.calibration.metric_labels import METRIC_LABELS
from voxeval.calibration.timeline_edits import turn_text
from voxeval.scoring.call_judges.call_conversation import call_conversation
from voxeval.simulation.timeline import Timeline

TEXT_METRICS = [m for m, spec in METRIC_LABELS.items() if spec.judge == "text"]


@pytest.fixture(scope="module")
def dev_set() -> DevSet:
    return build_dev_set(TEXT_METRICS, per_defect=2, seed=7, min_items=1)


def by_defect(dev_set: DevSet, defect: str) -> list[CalibrationExample]:
    found = [e for e in dev_set.examples if e.defect == defect]
    assert found, f"no {defect} example"
    return found


def clean_of(dev_set: DevSet, example: CalibrationExample) -> Timeline:
    clean = next(
        e for e in dev_set.examples if e.defect == CLEAN and e.scenario_id == example.scenario_id
    )
    assert clean.record.timeline is not None
    return clean.record.timeline


def caller_words(timeline: Timeline) -> str:
    return " ".join(s.intended_text + " " + s.transcript for s in timeline.speech("user"))


def alnum(text: str) -> str:
    return re.sub(r"[^0-9A-Za-z]", "", text)


def timeline_of(example: CalibrationExample) -> Timeline:
    assert example.record.timeline is not None
    return example.record.timeline


def test_every_defect_has_its_examples_and_every_scenario_a_clean_call(dev_set: DevSet) -> None:
    assert dev_set.shortfall == {}
    for defect in (
        "fabricated_tool_parameter",
        "misread_tool_result",
        "skipped_policy_step",
        "redundant_question",
        "verbose_turns",
        "unspeakable_text",
        "abandoned_goal",
    ):
        assert len(by_defect(dev_set, defect)) == 2
    for scenario in dev_set.scenarios:
        metrics = {
            e.metric for e in dev_set.examples if e.scenario_id == scenario and e.defect == CLEAN
        }
        assert metrics == set(TEXT_METRICS)
    # the domains take turns, so a small set covers more than one
    assert len({e.domain for e in dev_set.examples}) >= 2


def test_labels(dev_set: DevSet) -> None:
    for example in dev_set.examples:
        dims = example.expected.dimensions
        assert set(dims) == set(METRIC_LABELS[example.metric].dimensions)
        if example.defect == CLEAN:
            assert example.expected.defect is False and not any(dims.values())
        else:
            assert example.expected.defect is True
    fabricated = by_defect(dev_set, "fabricated_tool_parameter")[0].expected.dimensions
    assert fabricated["fabricated_tool_parameters"] is True
    assert fabricated["misrepresented_tool_results"] is False
    misread = by_defect(dev_set, "misread_tool_result")[0].expected.dimensions
    assert misread["misrepresented_tool_results"] is True
    skipped = by_defect(dev_set, "skipped_policy_step")[0].expected.dimensions
    assert skipped["policy_violations"] is True
    redundant = by_defect(dev_set, "redundant_question")[0]
    assert redundant.metric == "conversation_progression"
    assert redundant.expected.dimensions["information_loss"] is True
    verbose = by_defect(dev_set, "verbose_turns")[0].expected.dimensions
    assert verbose["verbosity_or_filler"] is True and verbose["over_enumeration"] is True
    abandoned = by_defect(dev_set, "abandoned_goal")[0].expected.dimensions
    assert abandoned["premature_ending"] is True


def test_the_fabricated_value_is_in_the_tool_call_and_never_said_by_the_caller(
    dev_set: DevSet,
) -> None:
    for example in by_defect(dev_set, "fabricated_tool_parameter"):
        timeline, edit = timeline_of(example), example.edit
        call = next(e for e in timeline.tools if e.name == edit["tool"])
        value = edit["fabricated_value"]
        assert str(call.arguments[edit["argument"]]) == value
        assert value not in caller_words(timeline)
        assert value in caller_words(clean_of(dev_set, example))  # the clean caller gave it
        assert value not in call_conversation(example.record).transcript.split("TOOL")[0]


def test_the_agent_states_a_value_other_than_the_tool_returned(dev_set: DevSet) -> None:
    for example in by_defect(dev_set, "misread_tool_result"):
        timeline, edit = timeline_of(example), example.edit
        said = turn_text(timeline, "assistant", edit["turn"])
        assert edit["agent_said"] in said and edit["agent_said"] != edit["tool_returned"]
        assert not re.search(rf"(?<![\w.]){re.escape(edit['tool_returned'])}(?!\w)", said)
        returned = " ".join(str(e.result) for e in timeline.tools if e.name == edit["tool"])
        if re.fullmatch(r"[\d.]+", edit["tool_returned"]):  # an amount: the tool's number
            numbers = [float(n) for n in re.findall(r"\d+(?:\.\d+)?", returned)]
            assert float(edit["tool_returned"]) in numbers
            assert float(edit["agent_said"]) not in numbers
        else:  # a code, maybe spelled out
            assert alnum(edit["tool_returned"]) in alnum(returned)
            assert alnum(edit["agent_said"]) not in alnum(returned)


def test_the_verification_step_is_gone(dev_set: DevSet) -> None:
    for example in by_defect(dev_set, "skipped_policy_step"):
        timeline = timeline_of(example)
        assert not [e for e in timeline.tools if e.kind == "auth"]
        assert [e for e in clean_of(dev_set, example).tools if e.kind == "auth"]
        for seg in timeline.speech("assistant"):
            assert not re.search(r"\bverif|one-time code", seg.intended_text, re.I)
        # the caller is still served: the other tool calls are all there
        clean_other = [e.name for e in clean_of(dev_set, example).tools if e.kind != "auth"]
        assert [e.name for e in timeline.tools] == clean_other


def test_the_agent_asks_again_and_the_caller_repeats_itself(dev_set: DevSet) -> None:
    for example in by_defect(dev_set, "redundant_question"):
        timeline = timeline_of(example)
        info = example.record.scenario.user_goal.information_required  # type: ignore[union-attr]
        label = example.edit["asked_again"][0]
        value = next(str(v) for k, v in info.items() if k.replace("_", " ") == label)
        giving = [s for s in timeline.speech("user") if value in s.intended_text]
        assert len(giving) == 2 and "already" in giving[1].intended_text
        agent = " ".join(s.intended_text for s in timeline.speech("assistant"))
        assert f"{label}" in agent and "again?" in agent
        assert (
            len(timeline.speech("assistant"))
            == len(clean_of(dev_set, example).speech("assistant")) + 2
        )


def test_verbose_turns_are_longer_and_read_out_tool_results(dev_set: DevSet) -> None:
    for example in by_defect(dev_set, "verbose_turns"):
        clean = {s.turn: s.intended_text for s in clean_of(dev_set, example).speech("assistant")}
        padded = {s.turn: s.intended_text for s in timeline_of(example).speech("assistant")}
        assert padded.keys() == clean.keys()
        for turn, text in padded.items():
            assert clean[turn] in text and len(text.split()) > len(clean[turn].split()) + 40
        for turn in example.edit["enumerated_turns"]:
            assert "here is all of what I have on file" in padded[turn]


def test_an_unspeakable_turn_holds_markdown_a_raw_id_and_a_url(dev_set: DevSet) -> None:
    for example in by_defect(dev_set, "unspeakable_text"):
        text = turn_text(timeline_of(example), "assistant", example.edit["turn"])
        assert text.startswith("**") and "\n- " in text and "https://" in text
        assert f"`{example.edit['record_id']}`" in text


def test_the_caller_abandons_its_goal(dev_set: DevSet) -> None:
    for example in by_defect(dev_set, "abandoned_goal"):
        timeline = timeline_of(example)
        assert timeline.end is not None and timeline.end.reason == "user_end_call"
        last = timeline.segments[-1]
        assert last.speaker == "user" and last.intended_text == example.edit["said"]
        assert not [e for e in timeline.tools if e.turn >= example.edit["before_agent_turn"]]


def test_edited_timelines_stay_consistent(dev_set: DevSet) -> None:
    for example in dev_set.examples:
        timeline = timeline_of(example)
        starts = [s.start for s in timeline.segments]
        assert starts == sorted(starts)
        for a, b in zip(timeline.segments, timeline.segments[1:], strict=False):
            assert a.end <= b.start + 1e-6, (example.example_id, a, b)
        for speaker in ("assistant", "user"):
            turns = sorted({s.turn for s in timeline.speech(speaker)})  # type: ignore[arg-type]
            assert turns == list(range(len(turns))), (example.example_id, speaker, turns)
        agent_turns = {s.turn for s in timeline.speech("assistant")}
        assert {e.turn for e in timeline.tools} <= agent_turns
        if timeline.end is not None and timeline.segments:
            assert timeline.end.t >= timeline.segments[-1].end - 1e-6


def test_same_seed_same_set_other_seed_other_scenarios() -> None:
    one = build_dev_set(["faithfulness"], per_defect=1, seed=3, min_items=1)
    two = build_dev_set(["faithfulness"], per_defect=1, seed=3, min_items=1)
    assert [(e.example_id, e.edit) for e in one.examples] == [
        (e.example_id, e.edit) for e in two.examples
    ]
    assert [call_conversation(e.record).transcript for e in one.examples] == [
        call_conversation(e.record).transcript for e in two.examples
    ]
    other = build_dev_set(["faithfulness"], per_defect=1, seed=4, min_items=1)
    assert other.scenarios != one.scenarios


def test_only_the_asked_metrics_get_examples() -> None:
    dev_set = build_dev_set(["speakability"], per_defect=1, seed=0, min_items=1)
    assert {e.metric for e in dev_set.examples} == {"speakability"}
    # the obvious defect and its subtle form
    assert sorted(e.defect for e in dev_set.examples) == [
        CLEAN,
        "raw_id_in_backticks",
        "unspeakable_text",
    ]
