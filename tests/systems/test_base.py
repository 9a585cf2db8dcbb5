"""The system contract (``systems.base``): ``SystemBase`` declares the class members voxeval
reads (``capabilities``, ``pipeline``) with their defaults; a plugin class that does not
inherit it is read through the runtime-checkable protocols; a system gets the run's config
through its typed ``SystemContext``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from voxeval.config import ProviderSpec, RunConfig, SystemSpec
from voxeval.providers.factory import SpecLike
from voxeval.systems.base import (
    CALL,
    REPLY,
    Reply,
    SystemBase,
    SystemContext,
    Turn,
    capabilities_of,
    declared_pipeline,
)
from voxeval.systems.scripted import ScriptedSystem


class Answers(SystemBase):
    capabilities = frozenset({REPLY})

    def reply(self, history: Sequence[Turn]) -> Reply:
        return Reply(audio=None, text="hi")

    def open_call(self) -> Any:  # declared capabilities win over what the methods show
        raise AssertionError("not called")


class Heard(Answers):
    pipeline = "cascade"


class PluginDeclared:  # no base: declares its members itself
    capabilities: ClassVar[frozenset[str]] = frozenset({CALL})
    pipeline: ClassVar[str] = "hybrid"

    def reply(self, history: Sequence[Turn]) -> Reply:
        return Reply(audio=None)


class PluginReplies:  # no base, no declaration: it offers what its methods show
    def reply(self, history: Sequence[Turn]) -> Reply:
        return Reply(audio=None)


class PluginCalls:
    def open_call(self) -> Any:
        return None


class PluginOddPipeline:
    pipeline = "telepathy"


def test_system_base_defaults_and_a_declaration_are_read_from_the_class() -> None:
    assert SystemBase.pipeline is None
    assert declared_pipeline(Answers) is None
    assert declared_pipeline(Heard) == "cascade"
    assert capabilities_of(Answers) == {REPLY}
    assert capabilities_of(Heard) == {REPLY}


def test_a_plugin_class_without_the_base_keeps_todays_reading() -> None:
    assert capabilities_of(PluginDeclared) == {CALL}
    assert declared_pipeline(PluginDeclared) == "hybrid"
    assert capabilities_of(PluginReplies) == {REPLY, CALL}
    assert capabilities_of(PluginCalls) == {CALL}
    assert capabilities_of(PluginOddPipeline) == frozenset()
    assert declared_pipeline(PluginReplies) is None
    assert declared_pipeline(PluginOddPipeline) is None  # not a pipeline voxeval knows


class RunStandIn:
    """The run context as a system sees it (``SystemContext``): the run's config, and the
    providers it is asked for (recorded, none built)."""

    def __init__(self, config: RunConfig) -> None:
        self.config = config
        self.asked: list[tuple[str, str | None]] = []

    def provider(self, kind: str, spec: SpecLike, *, cache: bool = True) -> Any:
        name = spec if isinstance(spec, str) else None
        if isinstance(spec, ProviderSpec):
            name = spec.provider
        elif isinstance(spec, dict):
            name = str(spec["provider"])
        self.asked.append((kind, name))
        return object()


SUT = [{"name": "s", "type": "scripted"}]


def scripted(ctx: SystemContext | None, **options: Any) -> ScriptedSystem:
    spec = SystemSpec(name="s", type="scripted", **options)
    return ScriptedSystem.from_spec(spec, ctx)


def test_the_scripted_system_reads_the_runs_config_through_its_context() -> None:
    config = RunConfig(
        suite="x", systems=SUT, asr={"provider": "whisper-base"}, simulation={"mode": "text"}
    )
    ctx = RunStandIn(config)
    system = scripted(ctx)  # type: ignore[arg-type]
    system._asr("en")
    assert ctx.asked == [("asr", "whisper-base")]  # the run's scoring ASR, not the default
    agent = system.open_call()  # text mode: nothing to warm
    assert ctx.asked == [("asr", "whisper-base")] and agent.name == "scripted"

    bare = RunStandIn(RunConfig(suite="x", systems=SUT, simulation={"mode": "text"}))
    scripted(bare)._asr("en")  # type: ignore[arg-type]
    assert bare.asked == [("asr", "whisper-tiny-en")]  # no run ASR: the language's default
    own = RunStandIn(config)
    scripted(own, asr="whisper-small")._asr("en")  # type: ignore[arg-type]
    assert own.asked == [("asr", "whisper-small")]
