"""Shared helpers for scoring tests: real providers pointed at the fake OpenAI server."""

from __future__ import annotations

from typing import Any

from tests.fakes.transcription_endpoint import transcription as transcription
from voxeval.providers.factory import create_provider
from voxeval.scoring import Judge, ScoringResources, TranscriptSettings


def remote_resources(
    server: Any, *, k: int = 3, with_judge: bool = True, language_id: Any = None
) -> ScoringResources:
    """Scoring resources whose ASR and judge are the OpenAI clients talking to ``server``;
    ``language_id`` (a real identifier, e.g. the embedded Whisper base) is the spoken-language
    identifier, if any."""

    def asr() -> Any:
        return create_provider("asr", {"provider": "openai", "base_url": server.url})

    def judge() -> Judge:
        llm = create_provider("llm", {"provider": "openai", "base_url": server.url, "model": "j"})
        return Judge(llm, max_attempts=3)

    return ScoringResources(
        asr=asr,
        judge=judge if with_judge else None,
        language_id=None if language_id is None else (lambda: language_id),
        transcript_settings=TranscriptSettings(k=k, max_decodes=10),
    )
