"""Model components behind small protocols; importing this package registers the built-ins."""

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
from voxeval.providers.factory import PROVIDER_KINDS, ProviderSpec, availability, create_provider

__all__ = [
    "ASR",
    "LLM",
    "MOS",
    "PROVIDER_KINDS",
    "TTS",
    "VAD",
    "Availability",
    "ChatResponse",
    "MOSResult",
    "Message",
    "ProviderSpec",
    "SpeechSegment",
    "ToolCall",
    "Transcript",
    "Usage",
    "Voice",
    "Word",
    "availability",
    "create_provider",
]
