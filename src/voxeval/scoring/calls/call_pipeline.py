"""Which kind of pipeline a system under test is, as the judged call metrics need to know it:
a ``cascade`` works from its own speech-to-text transcript of the caller, while a
``speech_to_speech`` or ``hybrid`` system hears the caller's audio itself, so mishearing is
its own fault. A system class may declare it (``SystemBase.pipeline``); the built-in types
are listed here."""

from __future__ import annotations

from voxeval.config import SystemSpec
from voxeval.errors import ConfigError, UnknownComponent
from voxeval.systems.base import PIPELINES, declared_pipeline
from voxeval.systems.base import SystemPipeline as Pipeline
from voxeval.systems.factory import system_class

__all__ = ["BUILT_IN_PIPELINES", "PIPELINES", "Pipeline", "hears_audio", "system_pipeline"]

BUILT_IN_PIPELINES: dict[str, Pipeline] = {
    "cascade": "cascade",
    "hybrid": "hybrid",
    "openai-realtime": "speech_to_speech",
    "openai-audio": "speech_to_speech",
}


def system_pipeline(spec: SystemSpec) -> str:
    """The pipeline of the system ``spec`` names: the one its class declares, else the
    built-in table, else ``unknown`` (a remote bridge or a scripted agent)."""
    try:
        declared = declared_pipeline(system_class(spec))
    except (UnknownComponent, ConfigError):  # a removed 0.1 spelling in an old run
        declared = None
    if declared is not None:
        return declared
    return BUILT_IN_PIPELINES.get(spec.type, "unknown")


def hears_audio(pipeline: str, has_user_transcripts: bool) -> bool:
    """True when the agent heard the caller's audio itself (no transcript of its own to be
    judged against): speech-to-speech and hybrid systems, or an unknown system that left no
    transcript of the caller."""
    if pipeline in ("speech_to_speech", "hybrid"):
        return True
    if pipeline == "cascade":
        return False
    return not has_user_transcripts
