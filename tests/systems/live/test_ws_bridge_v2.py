"""Protocol 2 of the websocket bridge, held by the streaming reference client
(examples/ws_agent_client.py --protocol 2, its own process): a spoken call with tools, the
client's transcripts on the timeline, its yield when the caller barges in, same bytes for the
same seed on the virtual clock, and version negotiation."""

import json
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from websockets.sync.client import connect

from tests.simulation.helpers import write_suite
from tests.simulation.parties import ListCaller, tone_voice
from voxeval.benchmarks.eva.scenario import load_scenario_suite
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.config import SystemSpec
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.calls.task_completion import task_completion
from voxeval.simulation.callers.scripted_caller import ScriptedCaller
from voxeval.simulation.engine import CallResult, run_call
from voxeval.systems.live.ws_bridge import WebsocketBridgeSystem
from voxeval.systems.live.ws_bridge_v2 import StreamingBridgeAgent

CLIENT = Path(__file__).resolve().parents[3] / "examples" / "ws_agent_client.py"


def client_call(
    tmp_path: Path,
    mode: str,
    caller: Any = None,
    flags: str = "",
    seed: int = 0,
    realtime: bool = False,
    voice_of_caller: Any = None,
) -> tuple[CallResult, Any]:
    suite_path = write_suite(tmp_path / "suite")
    suite = load_scenario_suite(suite_path)
    scenario = suite.scenarios[0]
    voice = " --voice tone" if mode == "audio" else ""
    agent = StreamingBridgeAgent(
        command=(
            f"{sys.executable} {CLIENT} --url {{url}} --suite {suite_path} --protocol 2"
            f"{voice} {flags}"
        ),
        connect_timeout_s=60,
        realtime=realtime,
    )
    kw: dict[str, Any] = {"caller_voice": voice_of_caller or tone_voice} if mode == "audio" else {}
    result = run_call(
        scenario,
        caller or ScriptedCaller(),
        agent,
        ToolRuntime(scenario, suite.tools),
        mode=mode,  # type: ignore[arg-type]
        seed=seed,
        **kw,
    )
    return result, scenario


def test_a_spoken_v2_call_with_tools_completes(tmp_path: Path) -> None:
    result, scenario = client_call(tmp_path, "audio")
    assert result.error is None and result.end_reason == "user_end_call"
    said = [s.intended_text for s in result.timeline.speech("assistant")]
    assert said[0] == "Hello, clinic line, how can I help you?"
    assert said[-1] == "Your visit is booked for Friday. Goodbye."
    # the client streamed its own audio: 0.3 s per word
    first = result.timeline.speech("assistant")[1]
    assert first.end - first.start == pytest.approx(10 * 0.3, abs=0.02)
    assert [t.name for t in result.timeline.tools] == ["verify_member", "book_visit"]
    # reported times: 300 ms of processing, the tool call 75 ms before the answer starts
    answers = {s.turn: s.start for s in result.timeline.speech("assistant")}
    for tool, turn in zip(result.timeline.tools, (2, 3), strict=True):
        assert answers[turn] - tool.t == pytest.approx(0.075, abs=0.021)
    record = LiveCallRecord(
        timeline=result.timeline, final_db=result.final_db, expected_db=scenario.expected_db
    )
    assert task_completion(record).value == 1.0
    assert result.assistant_track is not None and result.assistant_track.num_samples > 0


@pytest.mark.models
def test_in_audio_mode_the_clients_whisper_transcripts_reach_the_timeline(tmp_path: Path) -> None:
    """A Piper-voiced caller; the client transcribes each turn with the packaged Whisper."""
    from voxeval.providers.voices.speech_renderer import SpeechRenderer

    result, _ = client_call(
        tmp_path,
        "audio",
        flags="--asr whisper-tiny-en",
        voice_of_caller=SpeechRenderer("piper:joe"),
    )
    assert result.end_reason == "user_end_call"
    heard = {s.turn: s.transcript.lower() for s in result.timeline.speech("user") if s.transcript}
    assert "book a visit" in heard[0] and "go ahead" in heard[2]


def test_the_clients_transcripts_reach_the_user_segments(tmp_path: Path) -> None:
    result, _ = client_call(tmp_path, "text")
    assert result.end_reason == "user_end_call"
    turns: dict[int, list[str]] = {}
    said_over: list[str] = []  # backchannels over the agent, which the client heard too
    for seg in result.timeline.speech("user"):
        if seg.backchannel:  # an "uh-huh" over the agent is not part of the caller's turn
            said_over.extend(seg.intended_text.split())
            continue
        turns.setdefault(seg.turn, []).append(seg)  # type: ignore[arg-type]
    for pieces in turns.values():
        spoken = " ".join(p.intended_text for p in pieces).split()  # type: ignore[attr-defined]
        heard = pieces[0].transcript.split()  # type: ignore[attr-defined]
        for word in [w for w in heard if w in said_over and w not in spoken]:
            heard.remove(word)  # a backchannel the client heard before this turn
        if pieces[0].turn < 3:  # type: ignore[attr-defined]
            assert heard == spoken  # the client heard every word of the caller's turns
    assert turns[3][0].transcript == ""  # type: ignore[attr-defined]  # hung up: not heard


def barge_in_caller() -> ListCaller:
    return ListCaller("I need help", ["wait that is not right at all", "no"], 1.0)


@pytest.fixture(scope="module")
def spoken_barge_in(tmp_path_factory: pytest.TempPathFactory) -> CallResult:
    """A spoken call with barge-ins (seed 7): checked for the yield, and run again below for
    the same bytes."""
    path = tmp_path_factory.mktemp("barge")
    return client_call(path, "audio", barge_in_caller(), "--yield-ms 200", seed=7)[0]


@pytest.mark.parametrize("mode", ["text", "audio"])
def test_the_client_yields_when_the_caller_barges_in(
    tmp_path: Path, mode: str, request: pytest.FixtureRequest
) -> None:
    if mode == "audio":
        result: CallResult = request.getfixturevalue("spoken_barge_in")
    else:
        result, _ = client_call(tmp_path, mode, barge_in_caller(), "--yield-ms 200")
    agent = result.timeline.speech("assistant")
    user = result.timeline.speech("user")
    greeting = agent[0]
    assert greeting.interrupted
    barge = [u for u in user if greeting.start < u.start < greeting.end]
    assert barge and barge[0].start == pytest.approx(greeting.start + 1.0, abs=0.021)
    # it stopped 200 ms of caller speech later (plus the frame it acted in)
    assert greeting.end - barge[0].start == pytest.approx(0.2, abs=0.041)
    assert all(s.interrupted for s in agent if s.end - s.start > 1.1)


def test_on_the_wall_clock_the_client_yields_in_real_time(tmp_path: Path) -> None:
    """Frames go out at real time, no ticks; the stop lands a little after 200 ms of caller
    speech (how much later depends on the machine, hence the loose bound). The caller hangs
    up at its next turn: the call lasts only a few seconds of real time."""
    caller = ListCaller("I need help", [], 1.0)
    result, _ = client_call(tmp_path, "text", caller, "--yield-ms 200", realtime=True)
    assert result.end_reason == "user_end_call"
    greeting = result.timeline.speech("assistant")[0]
    barge = result.timeline.speech("user")[0]
    assert greeting.interrupted
    assert 0.19 <= greeting.end - barge.start <= 0.6
    assert barge.transcript == "I need help"


def test_virtual_v2_calls_are_the_same_bytes_for_the_same_seed(
    tmp_path: Path, spoken_barge_in: CallResult
) -> None:
    first = spoken_barge_in
    second, _ = client_call(tmp_path, "audio", barge_in_caller(), "--yield-ms 200", seed=7)
    for a, b in (
        (first.user_track, second.user_track),
        (first.assistant_track, second.assistant_track),
    ):
        assert a is not None and b is not None
        assert a.samples.tobytes() == b.samples.tobytes()
    assert first.timeline.segments == second.timeline.segments


def _hello_from_thread(agent: Any, version: int, answers: list[dict[str, Any]]) -> None:
    def run() -> None:
        with connect(agent.listen()) as ws:
            ws.send(json.dumps({"type": "hello", "protocol_version": version}))
            answers.append(json.loads(ws.recv()))

    threading.Thread(target=run, daemon=True).start()


@pytest.mark.parametrize("version", [1, 3])
def test_a_v2_bridge_refuses_other_versions(tmp_path: Path, version: int) -> None:
    suite = load_scenario_suite(write_suite(tmp_path / "suite"))
    scenario = suite.scenarios[0]
    agent = StreamingBridgeAgent(connect_timeout_s=10)
    answers: list[dict[str, Any]] = []
    _hello_from_thread(agent, version, answers)
    tools = ToolRuntime(scenario, suite.tools)
    result = run_call(scenario, ScriptedCaller(), agent, tools, mode="text")
    assert result.end_reason == "agent_error" and result.system_fault is not None
    assert f"protocol_version {version}" in str(result.error)
    assert answers[0]["type"] == "error" and answers[0]["code"] == "unsupported_version"
    assert answers[0]["supported_versions"] == [2] and answers[0]["protocol_version"] == 2
    # a version-1 agent is told where the move is described
    moving = "docs/websocket-bridge.md, 'Moving from version 1'"
    assert (moving in str(result.error)) == (version == 1)
    assert (moving in answers[0]["message"]) == (version == 1)


def test_the_system_opens_the_configured_version() -> None:
    spec = SystemSpec.model_validate({"name": "ext", "type": "websocket", "protocol_version": 2})
    system = WebsocketBridgeSystem.from_spec(spec)
    assert isinstance(system.open_call(), StreamingBridgeAgent)
    assert system.identity()["protocol_version"] == 2
    default = WebsocketBridgeSystem.from_spec(
        SystemSpec.model_validate({"name": "x", "type": "websocket"})
    )
    assert isinstance(default.open_call(), StreamingBridgeAgent)
    assert default.identity() == {"type": "websocket", "command": None, "protocol_version": 2}


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        ({"type": "tick", "seq": 9}, "tick for seq 9, expected 1"),
        ({"type": "stop", "frame": 999}, "stop needs 'frame' within 0..4"),
        ({"type": "dance"}, "unexpected message type 'dance'"),
        ({"type": "transcript", "text": "x", "start": -1.0}, "transcript start must be"),
    ],
)
def test_protocol_errors_end_the_call_as_the_agents_failure(
    tmp_path: Path, answer: dict[str, Any], error: str
) -> None:
    suite = load_scenario_suite(write_suite(tmp_path / "suite"))
    scenario = suite.scenarios[0]
    agent = StreamingBridgeAgent(connect_timeout_s=10)

    def run() -> None:
        with connect(agent.listen()) as ws:
            ws.send(json.dumps({"type": "hello", "protocol_version": 2}))
            assert json.loads(ws.recv())["type"] == "session.start"
            ws.send(json.dumps({"type": "listen"}))
            json.loads(ws.recv())  # the first line block
            ws.send(json.dumps(answer))
            for _ in ws:  # until voxeval closes
                pass

    threading.Thread(target=run, daemon=True).start()
    tools = ToolRuntime(scenario, suite.tools)
    result = run_call(scenario, ScriptedCaller(), agent, tools, mode="text")
    assert result.end_reason == "agent_error" and result.system_fault is not None
    assert error in str(result.error)
