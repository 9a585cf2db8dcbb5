"""Model components behind small protocols; importing this package registers the built-ins."""

# Speech providers (importing registers them): Whisper/OpenAI ASR; Piper, Kokoro, espeak,
# flite and OpenAI TTS.
# LLM providers and the call cache: OpenAI-compatible chat (text and audio), local GGUF/SmolLM2.
# Quality and activity: DNSMOS (ONNX) and DistillMOS (torch) MOS, Silero VAD (ONNX, pysilero).
from voxeval.config import ProviderSpec
from voxeval.providers.asr import asr_openai, asr_whisper
from voxeval.providers.audio_analysis import mos_distillmos, mos_dnsmos, vad_silero
from voxeval.providers.base import (
    ASR,
    LLM,
    MOS,
    TTS,
    VAD,
    Availability,
    ChatResponse,
    Message,
    MOSResult,
    SpeechSegment,
    ToolCall,
    Transcript,
    Usage,
    Voice,
    Word,
)
from voxeval.providers.caching.cache import ProviderCache, cached, default_cache
from voxeval.providers.factory import PROVIDER_KINDS, availability, create_provider
from voxeval.providers.llm import audio_llm_openai, llm_gguf, llm_openai
from voxeval.providers.llm.audio_llm_openai import (
    OpenAIAudioChat,
    audio_message,
    input_audio_part,
)
from voxeval.providers.llm.llm_gguf import GGUFChat, SmolLM2Chat
from voxeval.providers.llm.llm_openai import OpenAIChat
from voxeval.providers.tts import tts_espeak, tts_flite, tts_kokoro, tts_openai, tts_piper
from voxeval.providers.voices.speaker_transform import SpeakerTransform, apply_transform
from voxeval.providers.voices.voice_catalogue import (
    SpeakerProfile,
    VoiceChoice,
    render_speech,
    select_voice,
    voice_catalogue,
)

__all__ = [
    "ASR",
    "LLM",
    "MOS",
    "PROVIDER_KINDS",
    "TTS",
    "VAD",
    "Availability",
    "ChatResponse",
    "GGUFChat",
    "MOSResult",
    "Message",
    "OpenAIAudioChat",
    "OpenAIChat",
    "ProviderCache",
    "ProviderSpec",
    "SmolLM2Chat",
    "SpeakerProfile",
    "SpeakerTransform",
    "SpeechSegment",
    "ToolCall",
    "Transcript",
    "Usage",
    "Voice",
    "VoiceChoice",
    "Word",
    "apply_transform",
    "asr_openai",
    "asr_whisper",
    "audio_llm_openai",
    "audio_message",
    "availability",
    "cached",
    "create_provider",
    "default_cache",
    "input_audio_part",
    "llm_gguf",
    "llm_openai",
    "mos_distillmos",
    "mos_dnsmos",
    "render_speech",
    "select_voice",
    "tts_espeak",
    "tts_flite",
    "tts_kokoro",
    "tts_openai",
    "tts_piper",
    "vad_silero",
    "voice_catalogue",
]
