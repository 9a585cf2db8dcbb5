"""A small external voice agent for voxeval's websocket bridge (docs/websocket-bridge.md).

It answers from the scenario's scripted path: per caller turn it calls the next step's tools
(waiting for each ``tool_result``) and then says the step's text.

Both modes open with ``hello {protocol_version: 2}`` (``--protocol N`` for another N only
shows the bridge's refusal; version 1 was removed after voxeval 0.1).

Turn-based (``--turn-handling voxeval``): voxeval says when the caller finished
(``input.end``); the client answers with one turn.

Streaming (``--turn-handling agent``, the default): the client hears the whole line and takes
its own turn-taking decisions with a frame energy detector (text mode: the line's speech flags):

* the caller's turn is over after ``--eot-ms`` of silence: it answers (``response.start``);
* while it talks, caller speech lasting ``--yield-ms`` makes it stop (``stop``); shorter
  sounds (backchannels) are ignored;
* it sends a ``transcript`` of each caller turn with the turn's times. In text mode the text
  is the words the line carried; in audio mode it comes from the packaged Whisper with
  ``--asr whisper-tiny-en`` (off by default: the agent then reports no text, because the
  tests' callers speak with tone voices that no recogniser could transcribe, and Whisper
  costs about a second per turn on a small machine);
* ``--voice tone`` streams its own audio (each word a 0.3 s tone, sent in 100 ms chunks), a
  stand-in for a TTS that keeps the client free of model downloads; ``--voice text`` sends
  only the words and lets voxeval speak them with ``simulation.agent_voice``.

On the virtual clock the client answers every ``line`` block with ``tick`` or an action, and
reports its own processing time (``--latency-ms``, plus ``--tool-ms`` per tool call) so the
call is the same every run.

    python examples/ws_agent_client.py --url ws://127.0.0.1:8765 --suite suite.yaml
"""

from __future__ import annotations

import argparse
import base64
import itertools
import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from voxeval.benchmarks.eva.scenario import load_scenario_suite

RATE = 16000
WORD_S = 0.3
CHUNK_S = 0.1


def send(ws: Any, **message: Any) -> None:
    ws.send(json.dumps(message))


# ------------------------------------------------------------ turn-based (turn_handling: voxeval)
def play_step(ws: Any, step: Any, ids: itertools.count[int]) -> None:
    """One agent turn: tool calls first, then the words."""
    send(ws, type="agent.speech_start")
    for call in step.tool_calls:
        call_id = f"call_{next(ids)}"
        send(ws, type="tool_call", id=call_id, name=call.name, arguments=call.arguments)
        while True:  # wait for our result (caller audio may not arrive mid-turn)
            reply = json.loads(ws.recv())
            if reply["type"] == "tool_result" and reply["id"] == call_id:
                break
    send(ws, type="text", text=step.say)
    send(ws, type="call.end" if step.end_call else "agent.speech_end")


def run_turn_based(ws: Any, suite: Any) -> None:
    ids = itertools.count(1)
    send(ws, type="hello", protocol_version=2)
    start = json.loads(ws.recv())
    assert start["type"] == "session.start" and start["turn_handling"] == "voxeval", start
    steps = list(suite.get(start["scenario_id"]).agent_script)
    if start.get("greeting"):
        send(ws, type="agent.speech_start")
        send(ws, type="text", text=start["greeting"])
        send(ws, type="agent.speech_end")
    else:
        send(ws, type="agent.listening")
    for message in ws:
        event = json.loads(message)
        if event["type"] == "call.end":
            break
        if event["type"] != "input.end":
            continue  # audio frames / text: a real agent would listen here
        if steps:
            play_step(ws, steps.pop(0), ids)
        else:
            send(ws, type="agent.speech_start")
            send(ws, type="text", text="Thank you for calling. Goodbye.")
            send(ws, type="call.end")


# -------------------------------------------------------------- streaming (turn_handling: agent)
def tone_speech(text: str) -> bytes:
    """PCM16 for ``text``: one 0.3 s tone per word (a stand-in voice, see the docstring)."""
    words = max(1, len(text.split()))
    t = np.arange(int(words * WORD_S * RATE)) / RATE
    wave = 0.25 * np.sin(2 * np.pi * 220 * t) * (0.6 + 0.4 * np.sin(2 * np.pi * 3 * t))
    return (wave * 32767).astype("<i2").tobytes()


@dataclass
class Listener:
    """Frame-by-frame turn-taking state of the streaming client."""

    eot_ms: float
    yield_ms: float
    threshold: float
    speech_run: int = 0  # consecutive caller-speech frames
    silence_run: int = 0
    in_turn: bool = False  # the caller holds the floor (a turn we will answer)
    stopping: bool = False  # a stop is on its way (wall clock)
    turn_start: float = 0.0
    turn_end: float = 0.0
    words: list[str] = field(default_factory=list)
    audio: list[np.ndarray] = field(default_factory=list)


class StreamingClient:
    def __init__(self, ws: Any, suite: Any, args: argparse.Namespace) -> None:
        self.ws, self.suite, self.args = ws, suite, args
        self.ids = itertools.count(1)
        self.state = Listener(args.eot_ms, args.yield_ms, args.threshold)
        self.steps: list[Any] = []
        self.asr = None
        if args.asr:
            from voxeval.providers import create_provider

            self.asr = create_provider("asr", args.asr)

    def run(self) -> int:
        send(self.ws, type="hello", protocol_version=2)
        start = json.loads(self.ws.recv())
        if start["type"] == "error":
            print(f"bridge refused: {start['message']}")
            return 2
        assert start["type"] == "session.start" and start["protocol_version"] == 2, start
        self.virtual = start["clock"] == "virtual"
        self.steps = list(self.suite.get(start["scenario_id"]).agent_script)
        if start.get("greeting"):
            self.respond(None, start["greeting"], (), end_call=False)
        else:
            send(self.ws, type="listen")
        for raw in self.ws:
            message = json.loads(raw)
            if message["type"] == "call.end":
                break
            if message["type"] != "line":
                continue  # response.played and the like: nothing to do
            acted = self.hear(message)
            if not acted and self.virtual:
                send(self.ws, type="tick", seq=message["seq"])
        return 0

    def hear(self, line: dict[str, Any]) -> bool:
        """Take in a block frame by frame; True once it acted (the rest is sent again)."""
        s, frame_s = self.state, line["frame_ms"] / 1000
        frame_len = round(frame_s * RATE)
        samples = None
        if line.get("data"):
            raw = base64.b64decode(line["data"])
            samples = np.frombuffer(raw, "<i2").astype(np.float32) / 32768
        for i in range(line["frames"]):
            k = line["start_frame"] + i
            t = k * frame_s
            chunk = None if samples is None else samples[i * frame_len : (i + 1) * frame_len]
            if "speech" in line:
                speaking = line["speech"][i] == "1"
                word = line["words"].get(str(k))
            else:
                speaking = chunk is not None and float(np.sqrt(np.mean(chunk**2))) > s.threshold
                word = None
            if speaking:
                s.speech_run, s.silence_run = s.speech_run + 1, 0
                if not s.in_turn and (not line["agent_speaking"] or self.long_enough(frame_s)):
                    s.in_turn, s.turn_start = True, t - (s.speech_run - 1) * frame_s
                    s.words, s.audio = [], []
                s.turn_end = t + frame_s
            else:
                s.speech_run, s.silence_run = 0, s.silence_run + 1
            if s.in_turn:
                if word:
                    s.words.append(word)
                if chunk is not None:
                    s.audio.append(chunk)
            if not line["agent_speaking"]:
                s.stopping = False
            elif s.in_turn and self.long_enough(frame_s) and speaking and not s.stopping:
                send(self.ws, type="stop", frame=k)  # the caller talks over us: yield
                s.stopping = not self.virtual  # wall clock: the stop takes a moment to land
                return True
            silence_ms = s.silence_run * frame_s * 1000
            if s.in_turn and not line["agent_speaking"] and silence_ms >= s.eot_ms:
                self.caller_turn_over(k)
                return True
        return False

    def long_enough(self, frame_s: float) -> bool:
        return self.state.speech_run * frame_s * 1000 >= self.state.yield_ms

    def caller_turn_over(self, frame: int) -> None:
        s = self.state
        s.in_turn = False
        text = " ".join(s.words)
        if self.asr is not None and s.audio:
            from voxeval.audio import Audio

            text = self.asr.transcribe(Audio(np.concatenate(s.audio), RATE)).text
        send(self.ws, type="transcript", text=text, start=s.turn_start, end=s.turn_end)
        if self.steps:
            step = self.steps.pop(0)
            self.respond(frame, step.say, step.tool_calls, step.end_call)
        else:
            self.respond(frame, "Thank you for calling. Goodbye.", (), end_call=True)

    def respond(self, frame: int | None, say: str, tools: Any, end_call: bool) -> None:
        tool_s = self.args.tool_ms / 1000
        latency = self.args.latency_ms / 1000 + tool_s * len(tools)
        send(self.ws, type="response.start", frame=frame, latency_s=latency)
        for n, call in enumerate(tools, start=1):
            call_id = f"call_{next(self.ids)}"
            send(
                self.ws,
                type="tool_call",
                id=call_id,
                name=call.name,
                arguments=call.arguments,
                t=round(self.args.latency_ms / 1000 + tool_s * (n - 0.5), 6),
            )
            while True:
                reply = json.loads(self.ws.recv())
                if reply["type"] == "tool_result" and reply["id"] == call_id:
                    break
        send(self.ws, type="text", text=say)
        if self.args.voice == "tone":
            pcm, step = tone_speech(say), int(CHUNK_S * RATE) * 2
            for i in range(0, len(pcm), step):
                send(self.ws, type="audio", data=base64.b64encode(pcm[i : i + step]).decode())
        send(self.ws, type="response.end", end_call=end_call)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--url", required=True, help="the bridge address, ws://host:port")
    parser.add_argument("--suite", required=True, help="suite file holding the scenario")
    parser.add_argument("--protocol", type=int, default=2, help="bridge protocol version (2)")
    parser.add_argument(
        "--turn-handling",
        choices=("agent", "voxeval"),
        default="agent",
        help="who decides when a turn ends (voxeval: the turn-based exchange)",
    )
    parser.add_argument("--eot-ms", type=float, default=700.0, help="silence ending a turn")
    parser.add_argument("--yield-ms", type=float, default=200.0, help="talk-over before yielding")
    parser.add_argument("--threshold", type=float, default=0.02, help="frame RMS that is speech")
    parser.add_argument("--latency-ms", type=float, default=300.0, help="reported processing")
    parser.add_argument("--tool-ms", type=float, default=150.0, help="reported time per tool")
    parser.add_argument("--voice", choices=("tone", "text"), default="text")
    parser.add_argument("--asr", default=None, help="audio mode: ASR model, e.g. whisper-tiny-en")
    args = parser.parse_args()
    suite = load_scenario_suite(args.suite)
    from websockets.sync.client import connect

    with connect(args.url, max_size=2**24) as ws:
        if args.protocol == 2 and args.turn_handling == "voxeval":
            run_turn_based(ws, suite)
            return 0
        if args.protocol == 2:
            return StreamingClient(ws, suite, args).run()
        send(ws, type="hello", protocol_version=args.protocol)  # shows the refusal
        reply = json.loads(ws.recv())
        print(f"bridge answered: {reply}")
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
