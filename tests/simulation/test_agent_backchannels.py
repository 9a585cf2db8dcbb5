"""An agent's own backchannels (issue 38, point 6): a streaming agent says "mm-hm" while the
caller talks; the call records it as a backchannel, the caller neither yields to it nor
answers it, and ``agent_backchannel_rate`` counts and times it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.simulation.parties import ListCaller
from tests.simulation.test_duplex import call
from voxeval.scoring.calls.duplex_metrics import agent_backchannel_rate
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.systems.call import AgentTurn, CallAgentBase, LineBlock, Reply

ACK = "mm-hm right okay"  # 1.2 s in text mode: longer than a short "mm-hm", still no turn


class Nodder(CallAgentBase):
    """Acknowledges after 1 s of caller speech; says goodbye 0.7 s after the caller stops."""

    name = "nodder"
    streaming = True

    def __init__(self) -> None:
        self.run = self.silence = 0
        self.nodded = self.answered = False
        self.done: list[tuple[str, float]] = []

    def start(self, scenario: Any, tools: Any) -> None:
        return None

    def hear(self, block: LineBlock) -> Any:
        for i in range(block.frames):
            speaking = bool(block.speech[i]) if block.speech is not None else False
            k = block.start + i
            if speaking:
                self.run, self.silence = self.run + 1, 0
                if self.run == 50 and not self.nodded:
                    self.nodded = True
                    return Reply(k, lambda: AgentTurn(ACK, backchannel=True))
                continue
            self.silence += 1
            if self.run and self.silence >= 35 and not self.answered and not block.playing:
                self.answered = True
                return Reply(k, lambda: AgentTurn("goodbye then", end_call=True))
        return None

    def utterance_done(self, text: str, spoken_fraction: float) -> None:
        self.done.append((text, spoken_fraction))


def test_an_agent_backchannel_is_recorded_and_the_caller_talks_on() -> None:
    words = "one two three four five six seven eight nine ten"  # 0.1-4.1 s
    agent = Nodder()
    result = call(ListCaller(words, []), agent)
    caller = result.timeline.speech("user")
    said = result.timeline.speech("assistant")
    # decided after 1 s of speech (1.1), plays 0.8 s later for 1.2 s, over the caller
    ack = said[0]
    assert ack.backchannel and ack.intended_text == ACK and not ack.interrupted
    assert (ack.start, ack.end) == pytest.approx((1.9, 3.1))
    assert caller[0].end == pytest.approx(4.1) and not caller[0].interrupted  # no yield
    assert said[1].intended_text == "goodbye then" and not said[1].backchannel
    assert (ACK, 1.0) in agent.done  # played in full
    score = agent_backchannel_rate(LiveCallRecord(timeline=result.timeline))
    assert score.details["backchannels"] == 1 and score.details["over_caller_speech"] == 1
    assert score.details["times"][0]["start"] == pytest.approx(1.9)
    assert score.value == pytest.approx(1 / (4.0 / 60))
