"""The registry kind of each provider family, typed with its protocol: ``ASR_PROVIDERS.lookup
("whisper-base")`` is a class whose instances are ``ASR``."""

from __future__ import annotations

from typing import Literal

from voxeval.providers.base import ASR, LLM, MOS, TTS, VAD, AudioLLM
from voxeval.registry import Kind

ProviderKind = Literal["asr", "tts", "llm", "audio_llm", "mos", "vad"]

ASR_PROVIDERS: Kind[type[ASR]] = Kind("asr")
TTS_PROVIDERS: Kind[type[TTS]] = Kind("tts")
LLM_PROVIDERS: Kind[type[LLM]] = Kind("llm")
AUDIO_LLM_PROVIDERS: Kind[type[AudioLLM]] = Kind("audio_llm")
MOS_PROVIDERS: Kind[type[MOS]] = Kind("mos")
VAD_PROVIDERS: Kind[type[VAD]] = Kind("vad")
