"""The judged call metrics against a loopback OpenAI-compatible judge scripted with known
answers: each metric's value on a golden call, parse failures counted, a judge that never
answers in format leaves the metric pending, and no judge gives not-run with the reason."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, chat_text
from voxeval.benchmarks.eva.clinic_calls import CLINIC_CALLS_PATH
from voxeval.benchmarks.eva.scenario import Scenario, load_scenario_suite
from voxeval.config import SystemSpec
from voxeval.errors import ProviderUnavailable
from voxeval.protocols.live_call import JUDGED_METRICS, default_metrics
from voxeval.providers import create_provider
from voxeval.scoring.call_judges import faithfulness as faithfulness_module
from voxeval.scoring.calls.call_pipeline import system_pipeline
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.judge import Judge
from voxeval.scoring.metric_direction import metric_direction
from voxeval.scoring.metric_runner import run_metric
from voxeval.scoring.replies.reply_record import ScoringResources
from voxeval.scoring.system_fault import failure_score
from voxeval.simulation.timeline import EndEvent, SpeakerSegment, Timeline, ToolEvent

FAST = {"timeout_s": 2.0, "max_retries": 0, "backoff_base_s": 0.001, "backoff_max_s": 0.002}
FAITH_DIMS = faithfulness_module.DIMENSIONS
PROGRESSION_DIMS = (
    "unnecessary_tool_calls",
    "information_loss",
    "redundant_statements",
    "question_quality",
)


@pytest.fixture(scope="module")
def scenario() -> Scenario:
    return load_scenario_suite(CLINIC_CALLS_PATH).scenarios[0]


def golden_timeline() -> Timeline:
    """Greeting, one caller request (said AB12, the agent's ASR heard AB13), a lookup, two
    more agent turns: agent turns 0, 1, 2."""
    return Timeline(
        segments=[
            SpeakerSegment("assistant", 0.0, 1.0, 0, intended_text="Riverbend clinic, hello."),
            SpeakerSegment(
                "user", 1.5, 3.0, 0, intended_text="My id is AB12.", transcript="My id is AB13."
            ),
            SpeakerSegment("assistant", 3.5, 5.0, 1, intended_text="I found your record."),
            SpeakerSegment("user", 5.5, 6.0, 1, intended_text="Thanks.", transcript="Thanks."),
            SpeakerSegment("assistant", 6.5, 8.0, 2, intended_text="**Done**, see example.com"),
        ],
        tools=[ToolEvent(3.2, 1, "verify_patient", {"patient_id": "AB13"}, {"ok": True})],
        end=EndEvent(8.5, "agent_end_call"),
    )


def record(scenario: Scenario, pipeline: str = "cascade") -> LiveCallRecord:
    return LiveCallRecord(timeline=golden_timeline(), scenario=scenario, pipeline=pipeline)


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


def resources(server: FakeOpenAIServer) -> ScoringResources:
    spec = {"provider": "openai", "base_url": server.url, "model": "judge", **FAST}
    # schema_retries 0: every malformed answer reaches the Judge's own retry loop
    llm = create_provider("llm", {**spec, "schema_retries": 0})
    return ScoringResources(judge=lambda: Judge(llm, max_attempts=3))


def answer(obj: Any) -> FakeResponse:
    return chat_text(json.dumps(obj))


def dims(names: tuple[str, ...], ratings: tuple[int, ...]) -> dict[str, Any]:
    return {
        "dimensions": {
            n: {"rating": r, "evidence": f"turn evidence {n}"}
            for n, r in zip(names, ratings, strict=True)
        }
    }


def prompt_of(server: FakeOpenAIServer, n: int = 0) -> str:
    messages = server.posts("/chat/completions")[n].body["messages"]
    return "\n".join(str(m["content"]) for m in messages)


def test_faithfulness_is_the_normalised_minimum(
    server: FakeOpenAIServer, scenario: Scenario
) -> None:
    server.push(answer(dims(FAITH_DIMS, (3, 2, 3, 3, 3))))
    score = run_metric("faithfulness", record(scenario), resources(server))
    assert (score.value, score.passed) == (0.5, True)
    assert score.details["rating"] == 2
    assert score.details["dimensions"]["misrepresented_tool_results"] == 2
    assert score.details["parse_failures"] == 0 and score.details["judge_calls"] == 1
    prompt = prompt_of(server)
    # a cascade is judged on its own transcript of the caller, the policy is in the prompt
    assert "My id is AB13." in prompt and "My id is AB12." not in prompt
    assert scenario.agent.instructions.strip()[:60] in prompt
    assert faithfulness_module.CASCADE_CALLER_NOTE in prompt
    assert 'TOOL verify_patient({"patient_id": "AB13"})' in prompt


def test_faithfulness_of_a_speech_to_speech_call_counts_mishearing(
    server: FakeOpenAIServer, scenario: Scenario
) -> None:
    server.push(answer(dims(FAITH_DIMS, (1, 3, 3, 2, 3))))
    score = run_metric("faithfulness", record(scenario, "speech_to_speech"), resources(server))
    assert (score.value, score.passed) == (0.0, False)
    assert score.details["caller_text"] == "intended"
    prompt = prompt_of(server)
    assert "My id is AB12." in prompt and "My id is AB13." not in prompt
    assert faithfulness_module.AUDIO_CALLER_NOTE in prompt


@pytest.mark.parametrize(
    ("ratings", "value", "passed"),
    [((3, 3, 3, 3), 1.0, True), ((2, 3, 2, 3), 0.5, True), ((2, 2, 2, 3), 0.0, False)],
)
def test_conversation_progression_rule(
    server: FakeOpenAIServer,
    scenario: Scenario,
    ratings: tuple[int, ...],
    value: float,
    passed: bool,
) -> None:
    server.push(answer(dims(PROGRESSION_DIMS, ratings)))
    score = run_metric("conversation_progression", record(scenario), resources(server))
    assert (score.value, score.passed) == (value, passed)
    assert len(score.details["flagged"]) == sum(r < 3 for r in ratings)


def test_conciseness_is_the_mean_of_normalised_turn_ratings(
    server: FakeOpenAIServer, scenario: Scenario
) -> None:
    turns = [
        {"turn": 0, "rating": 3, "failure_tags": ["verbosity_or_filler"]},  # dropped: rated 3
        {"turn": 1, "rating": 2, "failure_tags": ["disproportionate_detail"]},
        {"turn": 2, "rating": 1, "failure_tags": ["over_enumeration", "verbosity_or_filler"]},
    ]
    server.push(answer({"turns": turns}))
    score = run_metric("conciseness", record(scenario), resources(server))
    assert score.value == pytest.approx((1.0 + 0.5 + 0.0) / 3) and score.passed is True
    assert score.details["turn_ratings"] == {"0": 3, "1": 2, "2": 1}
    assert score.details["tag_counts"] == {
        "verbosity_or_filler": 1,
        "excess_information_density": 0,
        "over_enumeration": 1,
        "disproportionate_detail": 1,
    }


def test_speakability_is_the_share_of_speakable_turns(
    server: FakeOpenAIServer, scenario: Scenario
) -> None:
    verdicts = [
        {"turn": 0, "speakable": 1, "reason": ""},
        {"turn": 1, "speakable": 1, "reason": ""},
        {"turn": 2, "speakable": 0, "reason": "markdown and a URL"},
    ]
    server.push(answer({"turns": verdicts}))
    score = run_metric("speakability", record(scenario), resources(server))
    assert score.value == pytest.approx(2 / 3) and score.passed is None
    assert score.details["unspeakable"] == {"2": "markdown and a URL"}
    assert "**Done**, see example.com" in prompt_of(server)


def test_speakability_does_not_run_on_speech_to_speech(
    server: FakeOpenAIServer, scenario: Scenario
) -> None:
    score = run_metric("speakability", record(scenario, "speech_to_speech"), resources(server))
    assert score.value is None and "speech-to-speech" in (score.error or "")
    assert server.posts() == []


def test_a_malformed_answer_is_retried_and_counted(
    server: FakeOpenAIServer, scenario: Scenario
) -> None:
    server.push(
        chat_text("The agent was mostly faithful."),  # not JSON
        answer(dims(FAITH_DIMS, (3, 3, 3, 3, 3))),
    )
    score = run_metric("faithfulness", record(scenario), resources(server))
    assert (score.value, score.passed) == (1.0, True)
    assert score.details["parse_failures"] == 1 and score.details["judge_calls"] == 2


def test_a_turn_left_out_is_a_parse_failure(server: FakeOpenAIServer, scenario: Scenario) -> None:
    partial_answer = {"turns": [{"turn": 0, "rating": 3, "failure_tags": []}]}
    full = {"turns": [{"turn": t, "rating": 2, "failure_tags": []} for t in (0, 1, 2)]}
    server.push(answer(partial_answer), answer(full))
    score = run_metric("conciseness", record(scenario), resources(server))
    assert score.value == 0.5 and score.details["parse_failures"] == 1


def test_a_judge_never_in_format_leaves_the_metric_pending(
    server: FakeOpenAIServer, scenario: Scenario
) -> None:
    bad = dims(PROGRESSION_DIMS[:3], (3, 3, 3))  # a dimension missing: fails the schema
    server.push(answer(bad), answer(bad), chat_text("no idea"))
    score = run_metric("conversation_progression", record(scenario), resources(server))
    assert score.pending and score.value is None
    assert score.details["parse_failures"] == 3 and len(score.details["raw"]) == 3


@pytest.mark.parametrize("metric", JUDGED_METRICS)
def test_no_judge_is_not_run_with_the_reason(metric: str, scenario: Scenario) -> None:
    def no_judge() -> Judge:
        raise ProviderUnavailable("no judge configured (set judge: in the run config)")

    score = run_metric(metric, record(scenario), ScoringResources(judge=no_judge))
    assert score.value is None and not score.pending
    assert score.error == "no judge configured (set judge: in the run config)"


def test_judged_metrics_are_defaults_only_with_a_judge() -> None:
    assert not set(JUDGED_METRICS) & set(default_metrics())
    assert set(JUDGED_METRICS) <= set(default_metrics(judged=True))


def test_system_pipelines() -> None:
    def kind(type_: str) -> str:
        return system_pipeline(SystemSpec(name="s", type=type_))

    assert kind("cascade") == "cascade"
    assert kind("hybrid") == "hybrid"
    assert kind("openai-realtime") == "speech_to_speech"
    assert kind("scripted") == "unknown"


def test_a_failed_system_scores_the_judged_metrics_as_failures() -> None:
    for metric in ("faithfulness", "conversation_progression", "conciseness"):
        failed = failure_score(metric, "timeout")
        assert (failed.value, failed.passed) == (0.0, False)
    assert failure_score("speakability", "timeout").error == "system fault: timeout"


def test_judged_metrics_are_better_when_higher() -> None:
    assert {metric_direction(m) for m in JUDGED_METRICS} == {"higher"}


def test_judge_repeats_keep_the_first_grading_and_every_value(
    server: FakeOpenAIServer, scenario: Scenario
) -> None:
    server.push(answer(dims(FAITH_DIMS, (3, 3, 3, 3, 3))))
    server.push(chat_text("not json"))  # the second grading needs a retry
    server.push(answer(dims(FAITH_DIMS, (3, 2, 3, 3, 3))))
    server.push(answer(dims(FAITH_DIMS, (1, 3, 3, 3, 3))))
    spec = {"provider": "openai", "base_url": server.url, "model": "judge", **FAST}
    llm = create_provider("llm", {**spec, "schema_retries": 0})
    res = ScoringResources(judge=lambda: Judge(llm, max_attempts=3, repeats=3))
    score = run_metric("faithfulness", record(scenario), res)
    assert (score.value, score.passed) == (1.0, True)  # the first grading
    assert score.details["judge_repeat_values"] == [1.0, 0.5, 0.0]
    assert score.details["judge_repeat_failures"] == 0
    assert score.details["judge_calls"] == 4 and score.details["parse_failures"] == 1
    seeds = [post.body.get("seed") for post in server.posts("/chat/completions")]
    assert seeds == [0, 100, 101, 200]  # distinct seeds: no grading reuses a cached answer


def test_the_whole_call_judges_say_why_they_did_not_run(
    server: FakeOpenAIServer, scenario: Scenario
) -> None:
    """No timeline, no policy, no agent turn: not run with the reason, no judge request."""
    no_timeline = LiveCallRecord(timeline=None, scenario=scenario, pipeline="cascade")
    for metric in ("faithfulness", "conversation_progression"):
        score = run_metric(metric, no_timeline, resources(server))
        assert score.error == "the call left no timeline to judge" and score.value is None
    no_policy = scenario.model_copy(
        update={"agent": scenario.agent.model_copy(update={"instructions": ""})}
    )
    score = run_metric("faithfulness", record(no_policy), resources(server))
    assert score.error == "the scenario gives no agent policy to judge faithfulness against"
    silent = Timeline(
        segments=[SpeakerSegment("user", 0.0, 1.0, 0, intended_text="Hello?")],
        tools=[],
        end=EndEvent(2.0, "agent_timeout"),
    )
    quiet = LiveCallRecord(timeline=silent, scenario=scenario, pipeline="cascade")
    score = run_metric("conversation_progression", quiet, resources(server))
    assert score.error == "the agent said nothing: there is no progression to judge"
    assert server.posts("/chat/completions") == []
