"""Shared by the cascade benches: the embedded cascade agent (Whisper tiny.en -> SmolLM2 ->
Piper, Silero VAD turn handling) against the scripted caller in audio mode on a built-in
clinic scenario, with every model loaded before the first call."""

from __future__ import annotations

from typing import Any

from voxeval.benchmarks.eva.clinic_calls import CLINIC_CALLS_PATH
from voxeval.benchmarks.eva.scenario import load_scenario_suite
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.config import SystemSpec
from voxeval.providers import create_provider
from voxeval.providers.voices.speech_renderer import SpeechRenderer
from voxeval.simulation.callers.scripted_caller import ScriptedCaller
from voxeval.simulation.compute_lane import SHARED_LANE, ComputeLane
from voxeval.simulation.engine import CallResult, run_call
from voxeval.systems.cascade import CascadeSystem

SCENARIO = "clinic-s11-check-balance"
MAX_TOKENS = 48  # short spoken replies, as a voice agent would be configured
TOOL_ROUNDS = 2  # each round re-reads the long scenario prompt: minutes on a loaded 2-core VM
# SmolLM2 on a busy 2-core machine can take longer than the default 15 s to answer; the
# benches measure speed, not whether the tiny baseline beats the caller's patience
AGENT_TIMEOUT_S = 120.0


class CascadeBench:
    """Builds the parties once (models load here, not in a call) and runs calls."""

    def __init__(self) -> None:
        self.suite = load_scenario_suite(CLINIC_CALLS_PATH)
        self.scenario = self.suite.get(SCENARIO)
        self.system = CascadeSystem.from_spec(
            SystemSpec(
                name="cascade", type="cascade", max_tokens=MAX_TOKENS, max_tool_rounds=TOOL_ROUNDS
            )
        )
        self.caller_asr = create_provider("asr", "whisper-tiny-en")
        self.caller_asr.transcribe(self.system.tts.synthesize("Hello there."))  # warm
        self.caller_voice = SpeechRenderer("piper:joe")
        self.caller_voice.warm_up()
        self.system.llm.chat([{"role": "user", "content": "Hi"}], max_tokens=4)  # warm

    def without_prefix_reuse(self) -> None:
        """Every LLM request starts from an empty llama.cpp context. One in-process model
        serves every call, and llama.cpp reuses the previous request's prompt prefix: how
        much it reuses depends on how calls interleave (identical calls in lockstep share
        whole prompts), which would make a reply's compute depend on its neighbours."""
        llm: Any = self.system.llm
        chat = llm.chat

        def fresh_chat(*args: Any, **kwargs: Any) -> Any:
            # (in the lane nothing else uses the model in between; without it a neighbour
            # may slip in, which is the unprotected case anyway)
            llm._model.reset()
            return chat(*args, **kwargs)

        llm.chat = fresh_chat

    def call(
        self, seed: int, max_duration_s: float, lane: ComputeLane | None = SHARED_LANE
    ) -> CallResult:
        agent: Any = self.system.open_call()
        return run_call(
            self.scenario,
            ScriptedCaller(asr=self.caller_asr, seed=seed),
            agent,
            ToolRuntime(self.scenario, self.suite.tools),
            mode="audio",
            caller_voice=self.caller_voice,
            agent_voice=self.caller_voice,  # unused: the cascade speaks itself
            max_duration_s=max_duration_s,
            agent_timeout_s=AGENT_TIMEOUT_S,
            seed=seed,
            compute_lane=lane,
        )
