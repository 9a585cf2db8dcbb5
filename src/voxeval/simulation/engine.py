"""The call engine: a full-duplex phone line between a simulated caller and an agent.

Frames. The line moves in frames of ``frame_ms`` (default 20 ms) on the call's clock, in both
directions: the agent receives the caller's line (speech, backchannels, the continuous
acoustic environment) frame by frame whether or not it is talking itself, and its own replies
go out from a frame boundary. An agent either listens to the line itself
(``StreamingCallAgent``) or answers whole turns and gets turn handling from
``voxeval.systems.turn_handling`` (streaming VAD, end-of-turn silence and patience, barge-in
threshold, history of what the caller heard). Nothing about yielding or barging in is a
constant of the engine: it records what each party did.

Time. A ``VirtualClock`` jumps: a stretch where the line is empty (no speech, no noise) is one
block for the agent, and nothing in between costs time. A ``WallClock`` waits for each
decision point, so external real-time agents meet a real-time caller. An agent's reply starts
at the first frame after its decision plus its latency: its measured compute (or a configured
latency model), plus, for a text-only agent whose text we speak, the declared
``RenderingLatency`` (never our synthesiser's wall time). In-process compute (the agent's work,
its listening, our renderers and callers) runs in a ``ComputeLane`` and is timed only while it
holds the lane, so calls running in parallel do not inflate each other's latency.

The caller follows its behaviour (``voxeval.simulation.caller_behaviour``): a turn is said as
its ``SpeakingPlan`` (pieces with silences between them, one caller turn); while an agent
utterance plays, its ``ListeningPlan`` adds backchannels and a barge-in, which starts the
caller's next turn having heard only what came before. Otherwise the caller answers
``caller_gap_s`` after an agent utterance ends that reached past the end of its turn (None:
a gap drawn from its persona, ``personas.response_gap``). If the
agent starts talking over the caller's turn and is still talking ``caller_yield_s`` later, the
caller gives up the rest of its turn (tau2-bench's full-duplex user yields when talked over
for 1 s; None: the caller never yields).

Endings: ``user_end_call``, ``agent_end_call``, ``agent_timeout`` (the agent said nothing for
``agent_timeout_s`` after the caller's turn ended; a pause inside a turn never counts),
``agent_error`` and ``max_duration``.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from voxeval.audio import Audio
from voxeval.audio.mix import mix_tracks
from voxeval.benchmarks.eva.scenario import Scenario
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.errors import SystemFault
from voxeval.json_types import JSONObject
from voxeval.simulation.call_end import timeline_until_end
from voxeval.simulation.call_engine.live_call import LiveCall, Mode
from voxeval.simulation.call_engine.settings import EngineSettings
from voxeval.simulation.call_engine.voices import AudioTransform, Renderer
from voxeval.simulation.clock import make_clock
from voxeval.simulation.compute_lane import SHARED_LANE, ComputeLane
from voxeval.simulation.latency import LatencyModel, RenderingLatency
from voxeval.simulation.line import LineEffect
from voxeval.simulation.parties import Caller
from voxeval.simulation.timeline import EndEvent, Timeline
from voxeval.simulation.turn_detection import FrameVAD
from voxeval.systems.call import CallAgent, StreamingCallAgent
from voxeval.systems.turn_handling import FrameVAD as StreamingVAD

__all__ = ["CallResult", "EngineSettings", "run_call"]


@dataclass
class CallResult:
    timeline: Timeline
    user_track: Audio | None
    assistant_track: Audio | None
    mixed: Audio | None
    initial_db: dict[str, Any]
    final_db: dict[str, Any]
    session: dict[str, Any]
    end_reason: str
    error: str | None = None
    duration_s: float = 0.0
    wall_s: float = 0.0
    details: JSONObject = field(default_factory=dict)
    # The agent (the system under test) failed: it raised, disconnected, answered with
    # unusable output or stayed silent past its timeout. The call is scored as a failure.
    system_fault: SystemFault | None = None


def run_call(
    scenario: Scenario,
    caller: Caller,
    agent: StreamingCallAgent | CallAgent,
    tools: ToolRuntime,
    *,
    mode: Mode = "audio",
    latency_model: LatencyModel | None = None,
    max_duration_s: float = 600.0,
    agent_timeout_s: float = 15.0,
    seed: int = 0,
    caller_voice: Renderer | None = None,
    agent_voice: Renderer | None = None,
    caller_transform: AudioTransform | None = None,
    line_effects: list[LineEffect] | None = None,
    vad: FrameVAD | None = None,
    agent_vad: StreamingVAD | None = None,
    interruption_asr: Callable[[Audio], str] | None = None,
    settings: EngineSettings | None = None,
    clock: str | None = None,
    rendering_latency: RenderingLatency | None = None,
    compute_lane: ComputeLane | None = SHARED_LANE,
) -> CallResult:
    """Run one call to its end and return the timeline, the tracks and the database state.

    ``agent`` is a ``StreamingCallAgent`` or a turn-based ``CallAgent`` (given turn handling
    with ``settings``' defaults, ``agent_vad`` and ``interruption_asr``, which counts the words
    of caller speech over its reply when ``settings.min_interruption_words`` asks).
    ``clock`` defaults to the agent's ``clock`` attribute (``"wall"`` for external real-time
    agents) or ``"virtual"``; such an agent may change it while starting (read again then).
    ``caller_transform`` perturbs each caller utterance, ``line_effects`` the whole caller
    line (continuous noise, connection); both change only what the agent hears.
    ``rendering_latency``: the declared speech model charged to a text-only agent (default
    ``RenderingLatency()``); ``compute_lane``: where in-process compute is timed (None: plain
    wall time, affected by other calls running in parallel)."""
    wall0 = time.perf_counter()
    initial_db = copy.deepcopy(tools.db)
    clock_kind = clock or agent.clock
    call = LiveCall(
        scenario,
        caller,
        agent,
        tools,
        mode=mode,
        latency=latency_model or LatencyModel(),
        max_duration_s=max_duration_s,
        agent_timeout_s=agent_timeout_s,
        seed=seed,
        caller_voice=caller_voice,
        agent_voice=agent_voice,
        caller_transform=caller_transform,
        line_effects=list(line_effects or []),
        vad=vad,
        agent_vad=agent_vad,
        interruption_asr=interruption_asr,
        settings=settings or EngineSettings(),
        clock=make_clock(clock_kind),
        rendering=rendering_latency or RenderingLatency(),
        lane=compute_lane,
        clock_follows_agent=clock is None,
    )
    try:
        ended = call.run()
        reason, t_end, error = ended.reason, ended.t, ended.error
    finally:
        agent.close()
    length = round(t_end, 4)  # tracks end with the call: a hang-up cuts the other side
    timeline = call.timeline
    timeline.segments = sorted(
        (replace(s, start=round(s.start, 4), end=round(s.end, 4)) for s in call.segments(t_end)),
        key=lambda s: (s.start, s.speaker),
    )
    timeline.end = EndEvent(length, reason)
    timeline.tools = [replace(t, t=round(t.t, 4)) for t in timeline.tools]
    timeline = timeline_until_end(timeline)  # nothing after the end was on the line
    user_track = assistant_track = mixed = None
    if mode == "audio":
        user_track = call.line.track(length)
        assistant_track = call.speech.track(length)
        assert assistant_track is not None
        mixed = mix_tracks([user_track, assistant_track], source="<bus:mixed>")
    final = tools.final_state()
    return CallResult(
        timeline=timeline,
        user_track=user_track,
        assistant_track=assistant_track,
        mixed=mixed,
        initial_db=initial_db,
        final_db=copy.deepcopy(final),
        session=copy.deepcopy(dict(tools.session)),
        end_reason=reason,
        error=error,
        duration_s=t_end,
        wall_s=time.perf_counter() - wall0,
        details={
            "latency": call.latency_details(),
            "compute_s": round(call.compute.compute_s, 6),
            "turn_handling": call.agent.turn_handling(),
        },
        system_fault=ended.fault,
    )
