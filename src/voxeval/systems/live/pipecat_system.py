"""The ``pipecat`` system: a user's Pipecat pipeline, unmodified, in a simulated call
(docs/pipecat.md).

``pipeline: "module:factory"`` names a function ``factory(transport, **options)`` returning
a ``PipelineTask``/``PipelineWorker`` or a ``Pipeline`` (or a coroutine of either), as a
Pipecat bot builds one around the transport it is given. voxeval gives it
``VoxevalTransport`` (``voxeval.systems.live.pipecat_link``), bound to the call's line, and also
passes, when the factory declares a parameter of that name (or ``**kwargs``): ``tools`` (the
scenario's tools as a Pipecat ``ToolsSchema``), ``instructions``, ``greeting`` and
``scenario_id``. The scenario's tools are registered as the functions of every LLM service in
the pipeline, bound to the call's database: each call lands in the call's tool log and final
database and is attached to the agent's next reply on the timeline.

``clock`` (default ``auto``): ``virtual`` runs the pipeline on the call's virtual clock (its
asyncio loop is stepped by the call and its time moves only when it has nothing left to do,
``voxeval.systems.live.virtual_loop``), so its timings do not depend on the machine's load;
``wall`` runs it in real time, its services' real time being the agent's latency; ``auto``
is ``virtual`` when every service of the built pipeline is local, else ``wall``. The call
record's ``latency.clock`` says which one ran. Replies are found in the audio the pipeline
plays (``voxeval.systems.live.live_audio_agent``). The pipeline crashing
is the agent's fault, scored as a failure; the pipeline ending (e.g. an ``EndFrame`` after a
goodbye) is the agent hanging up.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, Unpack

from pydantic import Field

from voxeval.errors import ConfigError
from voxeval.json_types import JSONObject, JSONValue
from voxeval.systems.base import SYSTEMS
from voxeval.systems.live.live_audio_agent import ListeningSettings, LiveAudioAgent
from voxeval.systems.live.live_audio_system import LiveAudioOptions, LiveAudioSystem

if TYPE_CHECKING:
    from pipecat.adapters.llm.schemas.tools_schema import ToolsSchema

    from voxeval.benchmarks.eva.scenario import Scenario
    from voxeval.benchmarks.tools import ToolRuntime
    from voxeval.benchmarks.tools.tool_call import ToolCallRecord
    from voxeval.systems.live.pipecat_link import FactoryArgument, PipecatLink, PipelineBuild


class PipecatOptions(LiveAudioOptions):
    pipeline: str = Field(pattern=r"^[\w.]+:[\w]+$")  # "module:factory"
    options: dict[str, Any] = Field(default_factory=dict)  # keyword arguments of the factory
    start_timeout_s: float = Field(default=60.0, gt=0)  # loading the pipeline's models
    greeting_wait_s: float = Field(default=3.0, ge=0)
    reply_gap_ms: float = Field(default=600.0, gt=0)
    clock: Literal["auto", "virtual", "wall"] = "auto"


PIPECAT_LISTENING = ListeningSettings(greeting_wait_s=3.0, reply_gap_ms=600.0)


class PipecatAgent(LiveAudioAgent):
    """One call with a freshly built pipeline (a ``StreamingCallAgent``). ``clock`` is
    ``wall`` until the pipeline is built, then the clock it runs on (the engine reads it
    again after ``start``)."""

    name = "pipecat"
    # On the virtual clock the pipeline's waits (VAD stop time, timers, pacing) take call time
    # and its models' compute does not: its latencies leave inference out (the report says so).
    compute_takes_call_time_on_virtual_clock = False

    def __init__(
        self,
        pipeline: str,
        *,
        options: JSONObject | None = None,
        start_timeout_s: float = 60.0,
        clock: str = "auto",
        **listening: Unpack[ListeningSettings],
    ) -> None:
        # a pipeline loads its models before greeting and pauses longer inside a reply
        settings: ListeningSettings = {**PIPECAT_LISTENING, **listening}
        super().__init__(**settings)
        self.factory = load_factory(pipeline)
        self.pipeline = pipeline
        self.options = dict(options or {})
        self.start_timeout_s = start_timeout_s
        self.requested_clock = clock
        self.clock = "virtual" if clock == "virtual" else "wall"
        self._link: PipecatLink | None = None

    def _open(self, scenario: Scenario, tools: ToolRuntime) -> PipecatLink:
        try:
            from voxeval.systems.live.pipecat_link import PipecatLink
        except ImportError as exc:  # pipecat-ai is an optional extra
            raise ConfigError(
                "the pipecat system needs pipecat-ai: pip install 'voxeval[pipecat]'"
            ) from exc
        extra: dict[str, FactoryArgument] = {
            "tools": tools_schema(tools.tool_schemas()),
            "instructions": scenario.agent.instructions,
            "greeting": scenario.agent.greeting,
            "scenario_id": scenario.id,
        }
        link = PipecatLink(
            self.factory,
            self.options,
            tools,
            extra,
            clock=self.requested_clock,
            busy_timeout_s=self.turn_timeout_s,
        )
        self._link = self.link = link  # closed with the call even when starting fails
        link.connect(self.start_timeout_s)
        self.clock = link.clock
        return link

    def _now(self) -> float:
        return self._link.now() if self._link is not None else super()._now()

    def _new_tool_calls(self) -> tuple[ToolCallRecord, ...]:
        return self._link.new_tool_calls() if self._link is not None else ()

    def _failure(self) -> str:
        return f"pipecat: the pipeline {self.pipeline} failed"


def load_factory(target: str) -> Callable[..., PipelineBuild]:
    """The function ``module:factory`` names (errors name the option)."""
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(
            f"pipecat: pipeline {target!r}: cannot import {module_name}: {exc}"
        ) from exc
    factory = getattr(module, attr, None)
    if not callable(factory):
        raise ConfigError(f"pipecat: pipeline {target!r}: {module_name} has no function {attr!r}")
    return factory


def tools_schema(openai_tools: list[JSONObject]) -> ToolsSchema:
    """The scenario's tools (OpenAI ``tools`` entries) as a Pipecat ``ToolsSchema``."""
    from pipecat.adapters.llm.schemas.function_schema import FunctionSchema
    from pipecat.adapters.llm.schemas.tools_schema import ToolsSchema

    functions = []
    for tool in openai_tools:
        fn = _json_object(tool["function"], "function")
        params = _json_object(fn.get("parameters") or {}, "function.parameters")
        name, description = fn["name"], fn.get("description", "")
        required = params.get("required", [])
        if not isinstance(name, str) or not isinstance(description, str):
            raise ConfigError(f"tool schema: name and description must be strings ({name!r})")
        if not isinstance(required, list):
            raise ConfigError(f"tool {name}: parameters.required must be a list")
        functions.append(
            FunctionSchema(
                name=name,
                description=description,
                properties=_json_object(params.get("properties", {}), "parameters.properties"),
                required=[str(r) for r in required],
            )
        )
    return ToolsSchema(standard_tools=functions)


def _json_object(value: JSONValue, where: str) -> JSONObject:
    if not isinstance(value, dict):
        raise ConfigError(f"tool schema: {where} must be an object, got {type(value).__name__}")
    return value


__all__ = ["PipecatAgent", "PipecatOptions", "PipecatSystem", "load_factory", "tools_schema"]


@SYSTEMS.register("pipecat")
class PipecatSystem(LiveAudioSystem[PipecatOptions]):
    """Holds live calls only; each call builds the pipeline anew (``PipecatAgent``)."""

    agent_class = PipecatAgent
    options_model = PipecatOptions

    def identity(self) -> JSONObject:
        o = self.options
        return {"type": "pipecat", "pipeline": o.pipeline, "options": o.options, "clock": o.clock}
