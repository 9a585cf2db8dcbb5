"""A tiny external voice agent for voxeval's websocket bridge (docs/websocket-bridge.md).

It connects to the bridge, and for each caller turn plays the next step of the scenario's
scripted path: it calls the step's tools (waiting for each ``tool_result``) and then says the
step's text. A real agent would transcribe the caller's ``audio`` frames and decide what to do;
this one only shows the message flow.

    python examples/ws_agent_client.py --url ws://127.0.0.1:8765 --suite path/to/suite.yaml
"""

from __future__ import annotations

import argparse
import itertools
import json
from typing import Any

from websockets.sync.client import connect

from voxeval.benchmarks.scenario import load_scenario_suite


def send(ws: Any, **message: Any) -> None:
    ws.send(json.dumps(message))


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="the bridge address, ws://host:port")
    parser.add_argument("--suite", required=True, help="suite file holding the scenario")
    args = parser.parse_args()
    suite = load_scenario_suite(args.suite)
    ids = itertools.count(1)
    with connect(args.url, max_size=2**24) as ws:
        start = json.loads(ws.recv())
        assert start["type"] == "session.start", start
        scenario = suite.get(start["scenario_id"])
        steps = list(scenario.agent_script)
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


if __name__ == "__main__":
    main()
