"""A user's Pipecat pipeline bound to the simulated line (needs ``pipecat-ai``; the
``pipecat`` system in ``voxeval.systems.live.pipecat_system`` imports this lazily).

``VoxevalTransport`` is an ordinary Pipecat transport: its input pushes the caller line's
20 ms frames (16 kHz PCM16, silence included, so the pipeline's VAD hears the pauses) as
``InputAudioRawFrame``s; its output plays the pipeline's audio like a sound card, paced by
the loop's clock, and hands every chunk, with the time it started playing, to the call. The
pipeline runs on its own asyncio loop in a thread; the scenario's tools are registered as the
functions of every LLM service in the pipeline, bound to the call's ``ToolRuntime``.

Clock (``clock``): ``wall`` runs the loop in real time. ``virtual`` runs it on a
``VirtualTimeLoop``, stepped by the call: time moves only when the pipeline has nothing left
to do (its models run in threads and its loopback requests are waited for), so its timings do
not depend on the machine's load. ``auto`` picks ``virtual`` when every service of the built
pipeline is local (in-process, or an HTTP service on a loopback address), else ``wall``.
Pipecat reads ``time.time()``/``time.monotonic()`` directly in places (bot-speaking frames,
VAD activity, idle timers): on a virtual loop those reads give the loop's time too.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import queue
import sys
import threading
import time
import types
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias
from urllib.parse import urlparse

import numpy as np
import numpy.typing as npt
from pipecat.frames.frames import InputAudioRawFrame, OutputAudioRawFrame, StartFrame
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineWorker
from pipecat.processors.frame_processor import FrameProcessor
from pipecat.services.ai_service import AIService
from pipecat.services.llm_service import FunctionCallParams, LLMService
from pipecat.transports.base_input import BaseInputTransport
from pipecat.transports.base_output import BaseOutputTransport
from pipecat.transports.base_transport import BaseTransport, TransportParams
from pipecat.workers.runner import WorkerRunner

from voxeval.audio import Audio, resample
from voxeval.errors import SystemFault
from voxeval.json_types import JSONObject, JSONValue
from voxeval.systems.live.virtual_loop import VirtualTimeLoop

if TYPE_CHECKING:
    from pipecat.adapters.llm.schemas.tools_schema import ToolsSchema

    from voxeval.benchmarks.tools import ToolRuntime
    from voxeval.benchmarks.tools.tool_call import ToolCallRecord

# What a pipeline factory returns (checked when the call starts), and the arguments voxeval
# offers it besides the configured options (the scenario's tools as a Pipecat ToolsSchema).
PipelineBuild = Pipeline | PipelineWorker | Awaitable[Pipeline | PipelineWorker]
if TYPE_CHECKING:
    FactoryArgument: TypeAlias = JSONValue | ToolsSchema

RATE = 16000
STEP_S = 0.02  # how far the call lets a virtual pipeline run before looking at what it played
# services that run in-process (a ``*Http*`` class of these talks to a server: URL decides)
IN_PROCESS_SERVICES = ("pipecat.services.whisper.", "pipecat.services.piper.")
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True)
class Incoming:
    at: float  # when the chunk started playing, on the link's clock (``PipecatLink.now``)
    event: str  # "audio", "closed" (the pipeline ended) or "failed"
    samples: npt.NDArray[np.float32] | None = None
    error: str = ""


class _LineInput(BaseInputTransport):
    async def start(self, frame: StartFrame) -> None:
        await super().start(frame)
        await self.set_transport_ready(frame)


class _SoundCard(BaseOutputTransport):
    """Plays the pipeline's audio in real time; each chunk goes to ``sink``."""

    def __init__(self, params: TransportParams, sink: Callable[[float, bytes, int], None]) -> None:
        super().__init__(params)
        self._sink = sink
        self._free_at = 0.0  # monotonic time the previous chunk has finished playing
        self.ready = asyncio.Event()

    async def start(self, frame: StartFrame) -> None:
        await super().start(frame)
        await self.set_transport_ready(frame)
        self.ready.set()

    async def write_audio_frame(self, frame: OutputAudioRawFrame) -> bool:
        loop = asyncio.get_running_loop()  # its clock: monotonic, or the call's virtual one
        begins = max(loop.time(), self._free_at)
        self._free_at = begins + len(frame.audio) / 2 / frame.sample_rate / frame.num_channels
        self._sink(begins, frame.audio, frame.sample_rate)
        await asyncio.sleep(max(0.0, self._free_at - loop.time()))
        return True


class VoxevalTransport(BaseTransport):
    """The simulated line as a Pipecat transport (16 kHz mono in and out)."""

    def __init__(self, sink: Callable[[float, bytes, int], None]) -> None:
        super().__init__()
        self.params = TransportParams(
            audio_in_enabled=True,
            audio_in_sample_rate=RATE,
            audio_out_enabled=True,
            audio_out_sample_rate=RATE,
        )
        self._input = _LineInput(self.params)
        self._output = _SoundCard(self.params, sink)

    def input(self) -> FrameProcessor:
        return self._input

    def output(self) -> FrameProcessor:
        return self._output


class PipecatLink:
    """One call's pipeline: the caller's frames in, the pipeline's audio out (an AudioLink)."""

    def __init__(
        self,
        factory: Callable[..., PipelineBuild],
        options: JSONObject,
        tools: ToolRuntime,
        extra: dict[str, FactoryArgument],
        *,
        clock: str = "wall",
        busy_timeout_s: float = 60.0,
    ) -> None:
        self.factory, self.options, self.tools, self.extra = factory, options, tools, extra
        self.incoming: queue.Queue[Incoming] = queue.Queue()
        self.records: list[ToolCallRecord] = []
        self.t0: float | None = None
        self.requested_clock = clock  # "wall", "virtual" or "auto"
        self.clock = "wall" if clock == "wall" else "virtual"  # settled once built (auto)
        self.busy_timeout_s = busy_timeout_s  # real seconds a virtual step may take
        self._taken = 0
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop = (
            asyncio.new_event_loop() if clock == "wall" else VirtualTimeLoop()
        )
        if isinstance(self._loop, VirtualTimeLoop):
            _loop_time_for_pipecat()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._worker: PipelineWorker | None = None
        self._run: asyncio.Future[None] | None = None
        self.transport = VoxevalTransport(self._heard_from_pipeline)

    # ---------------------------------------------------------------- engine thread
    def connect(self, timeout_s: float) -> None:
        future = asyncio.run_coroutine_threadsafe(self._start(), self._loop)
        deadline = time.monotonic() + timeout_s
        try:
            while self._virtual and not future.done() and time.monotonic() < deadline:
                assert isinstance(self._loop, VirtualTimeLoop)
                self._loop.settle(self.now() + STEP_S, max(0.0, deadline - time.monotonic()))
            future.result(max(0.0, deadline - time.monotonic()))
        except TimeoutError as exc:
            raise SystemFault(
                f"pipecat: the pipeline did not start within {timeout_s:g} s", cause="timeout"
            ) from exc

    @property
    def _virtual(self) -> bool:
        return isinstance(self._loop, VirtualTimeLoop) and self._loop.virtual

    def now(self) -> float:
        """The link's time: the virtual loop's, or ``time.monotonic()`` (what a wall loop's
        ``time()`` returns, so the pipeline's stamps and ours agree)."""
        return self._loop.time() if self._virtual else time.monotonic()

    def _step(self, until: float) -> None:
        """Let a virtual pipeline run up to ``until``; a pipeline still busy after
        ``busy_timeout_s`` real seconds is the agent's fault."""
        assert isinstance(self._loop, VirtualTimeLoop)
        if not self._loop.settle(until, self.busy_timeout_s):
            raise SystemFault(
                f"pipecat: the pipeline stayed busy for {self.busy_timeout_s:g} s of real time",
                cause="timeout",
            )

    def start_line(self, t0: float) -> None:
        self.t0 = t0

    def put(self, frame: int, samples: npt.NDArray[np.float32] | None) -> None:
        pcm = np.zeros(RATE // 50, np.int16)
        if samples is not None:
            clipped = np.clip(samples, -1.0, 1.0)
            pcm = np.round(clipped * 32767).astype(np.int16)
        audio = InputAudioRawFrame(audio=pcm.tobytes(), sample_rate=RATE, num_channels=1)
        asyncio.run_coroutine_threadsafe(self.transport._input.push_audio_frame(audio), self._loop)

    def next(self, deadline: float) -> Incoming | None:
        if self._virtual:  # run the pipeline step by step until it plays something
            while self.incoming.empty() and self.now() < deadline:
                self._step(min(deadline, self.now() + STEP_S))
            return None if self.incoming.empty() else self.incoming.get_nowait()
        wait = deadline - time.monotonic()
        try:
            if wait > 0:
                return self.incoming.get(timeout=wait)
            return self.incoming.get_nowait()
        except queue.Empty:
            return None

    def new_tool_calls(self) -> tuple[ToolCallRecord, ...]:
        with self._lock:
            fresh = tuple(self.records[self._taken :])
            self._taken = len(self.records)
        return fresh

    def close(self) -> None:
        if self._loop.is_closed():
            return
        if isinstance(self._loop, VirtualTimeLoop):
            self._loop.release()  # shutting down: its timeouts fire at once
        future = asyncio.run_coroutine_threadsafe(self._stop(), self._loop)
        with contextlib.suppress(Exception):  # best effort: the call's result is made
            future.result(10.0)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5.0)
        if not self._loop.is_running():
            self._loop.close()

    # ---------------------------------------------------------------- loop thread
    async def _start(self) -> None:
        built = self.factory(self.transport, **self._factory_kwargs())
        if inspect.isawaitable(built):
            built = await built
        if isinstance(built, Pipeline):
            built = PipelineWorker(built)
        if not isinstance(built, PipelineWorker):
            raise SystemFault(
                f"pipecat: the factory returned {type(built).__name__}, not a Pipeline or "
                "PipelineTask",
                cause="malformed_output",
            )
        self._worker = built
        processors = _processors(built.pipeline)
        if self.requested_clock == "auto" and not all(
            _is_local(p) for p in processors if isinstance(p, AIService)
        ):
            self.clock = "wall"
        if self.clock == "wall" and isinstance(self._loop, VirtualTimeLoop):
            self._loop.to_wall()
        else:
            _loop_time_for_pipecat()  # modules the factory imported read the loop's time too
        llms = [p for p in processors if isinstance(p, LLMService)]
        for llm in llms:
            for name in self.tools.tools:
                llm.register_function(name, self._tool_handler(name))
        runner = WorkerRunner(handle_sigint=False)
        self._run = asyncio.ensure_future(self._run_pipeline(runner, built))
        await self.transport._output.ready.wait()

    async def _run_pipeline(self, runner: WorkerRunner, worker: PipelineWorker) -> None:
        try:
            await runner.add_workers(worker)
            await runner.run()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the pipeline crashed: the agent's fault
            self.incoming.put(Incoming(self._loop.time(), "failed", error=f"{exc!r}"))
            return
        self.incoming.put(Incoming(self._loop.time(), "closed"))

    async def _stop(self) -> None:
        if self._worker is not None and self._run is not None and not self._run.done():
            await self._worker.cancel()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(self._run, 10.0)

    def _factory_kwargs(self) -> dict[str, FactoryArgument]:
        """The configured options, plus what voxeval offers that the factory asks for."""
        accepted = inspect.signature(self.factory).parameters
        takes_all = any(p.kind is p.VAR_KEYWORD for p in accepted.values())
        kwargs: dict[str, FactoryArgument] = {**self.options}
        for name, value in self.extra.items():
            if name in accepted or takes_all:
                kwargs.setdefault(name, value)
        return kwargs

    def _tool_handler(self, name: str) -> Callable[[FunctionCallParams], Awaitable[None]]:
        async def run(params: FunctionCallParams) -> None:
            record = await asyncio.to_thread(self._call_tool, name, dict(params.arguments))
            result = record.result if record.error is None else {"error": record.error}
            await params.result_callback(result)

        return run

    def _call_tool(self, name: str, arguments: JSONObject) -> ToolCallRecord:
        with self._lock:
            record = self.tools.call(name, arguments)
            self.records.append(record)
        return record

    def _heard_from_pipeline(self, at: float, pcm: bytes, rate: int) -> None:
        samples = np.frombuffer(pcm, np.int16).astype(np.float32) / 32768.0
        if rate != RATE:
            samples = resample(Audio(samples, rate, "<pipecat>"), RATE).samples
        self.incoming.put(Incoming(at, "audio", samples))


def _is_local(service: AIService) -> bool:
    """An in-process service, or one whose server is on this machine (a loopback URL)."""
    url = _service_url(service)
    if url is not None:
        return (urlparse(url).hostname or "") in LOOPBACK_HOSTS
    return type(service).__module__.startswith(IN_PROCESS_SERVICES)


def _service_url(service: AIService) -> str | None:
    """The server address a service talks to, where Pipecat's services keep it."""
    client = getattr(service, "_client", None)
    for holder, name in ((client, "base_url"), (service, "_base_url"), (service, "_url")):
        value = getattr(holder, name, None) if holder is not None else None
        if value:
            return str(value)
    return None


class _LoopTime(types.ModuleType):
    """Stands for the ``time`` module inside Pipecat's modules: ``time()`` and
    ``monotonic()`` read a virtual loop's clock when called on that loop, the real clock
    anywhere else (so a wall-clock pipeline in the same process is unaffected)."""

    def __init__(self, real: types.ModuleType) -> None:
        super().__init__("time")
        self._real = real
        self._epoch = real.time()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def monotonic(self) -> float:
        loop = _virtual_loop()
        return loop.time() if loop is not None else self._real.monotonic()

    def time(self) -> float:
        loop = _virtual_loop()
        return self._epoch + loop.time() if loop is not None else self._real.time()


def _virtual_loop() -> VirtualTimeLoop | None:
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return None
    return loop if isinstance(loop, VirtualTimeLoop) and loop.virtual else None


def _loop_time_for_pipecat() -> None:
    """Point the ``time`` name of every loaded Pipecat module at ``_LoopTime`` (once each)."""
    proxy = _LoopTime(time)
    for name, module in list(sys.modules.items()):
        if name.startswith("pipecat") and getattr(module, "time", None) is time:
            module.time = proxy  # type: ignore[attr-defined]


def _processors(processor: FrameProcessor) -> list[FrameProcessor]:
    """Every processor in a pipeline, nested pipelines included."""
    found = [processor]
    for child in getattr(processor, "processors", None) or []:
        if child is not processor:
            found += _processors(child)
    return found
