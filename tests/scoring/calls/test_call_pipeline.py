"""A system's pipeline: the one its class declares (``SystemBase.pipeline``), else the
built-in table, else ``unknown``."""

from __future__ import annotations

from typing import Any

import pytest

from voxeval import registry
from voxeval.config import SystemSpec
from voxeval.scoring.calls.call_pipeline import system_pipeline
from voxeval.systems.base import CALL, SystemBase


class DeclaresSpeech(SystemBase):
    capabilities = frozenset({CALL})
    pipeline = "speech_to_speech"

    @classmethod
    def from_spec(cls, spec: Any, ctx: Any = None) -> Any:
        raise AssertionError("the pipeline is read from the class, nothing is built")


class DeclaresNothing(DeclaresSpeech):
    pipeline = None


def test_the_declared_pipeline_else_the_table_else_unknown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    registry.names("system")  # the built-ins first, then a scratch copy for the test types
    monkeypatch.setattr(registry, "_REGISTRY", {k: dict(t) for k, t in registry._REGISTRY.items()})
    registry.register("system", "test-pipeline-declared")(DeclaresSpeech)
    registry.register("system", "test-pipeline-default")(DeclaresNothing)

    def of(type_: str) -> str:
        return system_pipeline(SystemSpec(name="s", type=type_))

    assert of("test-pipeline-declared") == "speech_to_speech"
    assert of("test-pipeline-default") == "unknown"
    assert of("cascade") == "cascade" and of("openai-realtime") == "speech_to_speech"
    assert of("scripted") == "unknown"
