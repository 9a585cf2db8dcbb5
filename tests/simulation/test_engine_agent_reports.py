"""Golden: what a streaming agent reports itself lands on the timeline — its transcript of the
caller under the caller's turn, its tool calls at the times it gives (text mode, 20 ms frames,
agent latency fixed at 0.5 s, words 0.4 s, caller gap 0.6 s)."""

import pytest

from tests.simulation.parties import ListCaller, NoTools
from voxeval.benchmarks.tools.tool_call import ToolCallRecord
from voxeval.simulation.engine import run_call
from voxeval.simulation.latency import ComponentLatency, LatencyModel
from voxeval.systems.call import AgentTurn, CallAgentBase, HeardSpeech, LineBlock, Reply


class ReportingAgent(CallAgentBase):
    """Answers once, 10 silent frames after the caller stops, with one tool call reported
    0.25 s into its work, and reports what it heard with the caller's times."""

    name = "reporting"
    streaming = True

    def __init__(self) -> None:
        self.silent = 0
        self.heard_speech = False
        self.answered = False
        self.reports: list[HeardSpeech] = []

    def start(self, scenario, tools):  # type: ignore[no-untyped-def]
        return None

    def hear(self, block: LineBlock):  # type: ignore[no-untyped-def]
        flags = block.speech if block.speech is not None else [False] * block.frames
        for i, speaking in enumerate(flags):
            self.heard_speech |= bool(speaking)
            self.silent = 0 if speaking else self.silent + 1
            if self.heard_speech and self.silent == 10 and not self.answered:
                self.answered = True
                self.reports.append(HeardSpeech("i need help", 0.1, 1.3))
                return Reply(block.start + i, self.produce)
        return None

    def produce(self) -> AgentTurn:
        record = ToolCallRecord("lookup", {"n": 0}, {"ok": True}, kind="read")
        return AgentTurn("a b", tool_calls=(record,), tool_offsets_s=(0.25,))

    def take_transcripts(self) -> list[HeardSpeech]:
        reports, self.reports = self.reports, []
        return reports

    def utterance_done(self, text: str, spoken_fraction: float) -> None:
        pass


def test_reported_transcripts_and_tool_times_land_on_the_timeline() -> None:
    fixed = LatencyModel(agent=ComponentLatency(kind="fixed", ms=500))
    result = run_call(
        None,  # type: ignore[arg-type]
        ListCaller("i need help", []),
        ReportingAgent(),
        NoTools(),  # type: ignore[arg-type]
        mode="text",
        latency_model=fixed,
    )
    user = result.timeline.speech("user")
    agent = result.timeline.speech("assistant")
    assert [(u.start, u.end, u.transcript) for u in user] == [
        (0.1, 1.3, "i need help"),
        (3.4, 3.8, ""),
    ]
    # caller stops at frame 65; the 10th silent frame is 74: the turn is taken at 1.5 s
    assert [(a.start, a.end) for a in agent] == [(2.0, 2.8)]
    assert [(t.name, t.t) for t in result.timeline.tools] == [("lookup", pytest.approx(1.75))]
