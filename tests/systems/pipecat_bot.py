"""An ordinary Pipecat voice bot built from the embedded models, as a user would write it for
deployment: Silero VAD, Whisper tiny.en (faster-whisper), an OpenAI-compatible LLM at
``llm_url`` and Piper's Joe voice, with Pipecat's own services and aggregators. voxeval's
``pipecat`` system calls ``build(transport, ...)`` with its own transport."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pipecat.audio.vad.silero import SileroVADAnalyzer
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import (
    LLMContextAggregatorPair,
    LLMUserAggregatorParams,
)
from pipecat.services.openai.llm import OpenAILLMService
from pipecat.services.piper.tts import PiperTTSService
from pipecat.services.whisper.stt import WhisperSTTService
from pipecat.transports.base_transport import BaseTransport
from pipecat.turns.user_stop.speech_timeout_user_turn_stop_strategy import (
    SpeechTimeoutUserTurnStopStrategy,
)
from pipecat.turns.user_turn_strategies import UserTurnStrategies


def build(
    transport: BaseTransport,
    *,
    llm_url: str,
    whisper_dir: str,
    piper_dir: str,
    tools: Any = None,
    instructions: str = "You are a helpful phone assistant.",
    steady_voice: bool = False,
) -> PipelineWorker:
    stt = WhisperSTTService(
        settings=WhisperSTTService.Settings(model=whisper_dir), device="cpu", compute_type="int8"
    )
    llm = OpenAILLMService(
        settings=OpenAILLMService.Settings(model="scripted"), api_key="test-key", base_url=llm_url
    )
    tts = PiperTTSService(
        settings=PiperTTSService.Settings(voice="en_US-joe-medium"), download_dir=Path(piper_dir)
    )
    if steady_voice:  # no sampling noise in Piper: the same text gives the same audio
        tts._voice.config.noise_scale = tts._voice.config.noise_w_scale = 0.0
    context = LLMContext([{"role": "system", "content": instructions}], tools=tools)
    aggregators = LLMContextAggregatorPair(
        context,
        user_params=LLMUserAggregatorParams(
            vad_analyzer=SileroVADAnalyzer(),
            user_turn_strategies=UserTurnStrategies(
                stop=[SpeechTimeoutUserTurnStopStrategy(user_speech_timeout=0.5)]
            ),
        ),
    )
    pipeline = Pipeline(
        [
            transport.input(),
            stt,
            aggregators.user(),
            llm,
            tts,
            transport.output(),
            aggregators.assistant(),
        ]
    )
    return PipelineWorker(pipeline, params=PipelineParams(audio_in_sample_rate=16000))


def broken(transport: BaseTransport) -> str:
    """A factory that returns no pipeline (the agent's fault)."""
    return "not a pipeline"
