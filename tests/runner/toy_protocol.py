"""A tiny protocol and suite for testing the runner, store and reports (registered on import).

The suite file (YAML) lists items and knobs:
``items: [{id, category}]``, ``log: PATH`` (every interact/score call appends a line),
``sleep: SECONDS`` per interact, ``fail_items: [ids]`` (interact raises unless the file
``<log>.heal`` exists), ``interrupt_item: ID`` (interact raises KeyboardInterrupt unless
``<log>.heal`` exists), ``harness_faults: {id: N}`` (the first N interactions of each of the
item's units raise ``HarnessFault(component="simulator")``; counted in the log),
``system_faults: {id: CAUSE}`` (the system under test fails: a ``SystemFault``, scored 0),
``judge_down: true`` (the ``judge`` metric is pending unless ``<log>.heal`` exists).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import yaml

from voxeval.api import EvaluationProtocol, RunContext, WorkUnit
from voxeval.atomic_files import write_json_atomic
from voxeval.benchmarks.suite_info import SuiteInfo
from voxeval.errors import HarnessFault, SystemFault
from voxeval.registry import register
from voxeval.scoring.score import Score

DEFAULT_METRICS = ["length", "judge"]


# The judge of toy runs: the real ``openai`` LLM provider. The toy ``judge`` metric only checks
# that the run has a judge and never sends it a request, so the loopback address it names has
# no server behind it (a request would fail loudly with a refused connection).
TOY_JUDGE = {"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "toy-judge"}


def suite_data(ctx: RunContext) -> dict[str, Any]:
    assert ctx.suite is not None
    data: dict[str, Any] = yaml.safe_load(ctx.suite.path.read_text())
    return data


def log(ctx: RunContext, line: str) -> None:
    path = suite_data(ctx).get("log")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")


def interactions(ctx: RunContext, unit: WorkUnit) -> int:
    """How often ``unit`` was interacted with so far (this one included), from the log."""
    path = suite_data(ctx).get("log")
    if not path or not Path(path).exists():
        return 0
    return Path(path).read_text().splitlines().count(f"interact {unit.key}")


def healed(ctx: RunContext) -> bool:
    path = suite_data(ctx).get("log")
    return bool(path) and Path(f"{path}.heal").exists()


@register("protocol", "toy")
class ToyProtocol(EvaluationProtocol):
    name = "toy"

    def plan(self, ctx: RunContext) -> list[WorkUnit]:
        items = suite_data(ctx)["items"]
        conditions = ctx.config.conditions or ["clean"]
        return [
            WorkUnit(item["id"], system.name, trial, condition, item.get("category", ""))
            for item in items
            for condition in conditions
            for system in ctx.config.systems
            for trial in range(ctx.config.trials)
        ]

    def interact(self, unit: WorkUnit, ctx: RunContext) -> None:
        data = suite_data(ctx)
        log(ctx, f"interact {unit.key}")
        time.sleep(float(data.get("sleep", 0)))
        if unit.item_id == data.get("interrupt_item") and not healed(ctx):
            raise KeyboardInterrupt
        if unit.item_id in data.get("fail_items", []) and not healed(ctx):
            raise RuntimeError(f"toy failure on {unit.item_id}")
        harness_faults = int((data.get("harness_faults") or {}).get(unit.item_id, 0))
        if harness_faults and interactions(ctx, unit) <= harness_faults:
            raise HarnessFault(f"toy caller broke on {unit.item_id}", component="simulator")
        cause = (data.get("system_faults") or {}).get(unit.item_id)
        rng = ctx.rng(unit.item_id, unit.trial)
        write_json_atomic(
            ctx.store.folder.unit_dir(unit) / "reply.json",
            {"text": unit.item_id.upper(), "noise": float(rng.random()), "system_fault": cause},
        )
        ctx.store.recorder.record_usage(unit, "toy-judge", 2, 100, 20, 0.001, parse_failures=1)
        if cause:
            raise SystemFault(f"toy system failed on {unit.item_id}", cause=cause)

    def score(self, unit: WorkUnit, ctx: RunContext, metrics: list[str] | None) -> dict[str, Score]:
        log(ctx, f"score {unit.key}")
        reply = json.loads((ctx.store.folder.unit_dir(unit) / "reply.json").read_text())
        number = int(unit.item_id[1:])
        if reply.get("system_fault"):
            failed = {"system_fault": reply["system_fault"]}
            return {m: Score(0.0, passed=False, details=failed) for m in metrics or DEFAULT_METRICS}
        judge_down = suite_data(ctx).get("judge_down") and not healed(ctx)
        available = {
            "length": lambda: Score(float(len(reply["text"]) + number + unit.trial), passed=True),
            "judge": lambda: (
                Score.pending_retry("toy judge: EndpointError: HTTP 500")
                if judge_down
                else Score(7.0)
                if ctx.judge() is not None
                else Score.not_run(str(ctx.judge_unavailable_reason()))
            ),
            "parity": lambda: Score(float(number % 2), passed=number % 2 == 0),
        }
        return {m: available[m]() for m in (metrics or DEFAULT_METRICS)}


def write_suite(folder: Path, n_items: int = 6, **knobs: Any) -> Path:
    """A suite folder with ``n_items`` items in two categories; returns the suite file."""
    folder.mkdir(parents=True, exist_ok=True)
    items = [
        {"id": f"q{i:02d}", "category": "even" if i % 2 == 0 else "odd"} for i in range(n_items)
    ]
    path = folder / "suite.yaml"
    path.write_text(yaml.safe_dump({"protocol": "toy", "name": "toy", "items": items, **knobs}))
    return path


def write_config(path: Path, suite: Path, **fields: Any) -> Path:
    data = {"suite": str(suite), "systems": [{"name": "echo", "type": "toy"}], **fields}
    path.write_text(yaml.safe_dump(data))
    return path


register("suite", "toy-registered")(
    SuiteInfo(
        name="toy-registered",
        protocol="toy",
        description="test-only suite",
        path=Path(__file__).parent / "no-such-suite.yaml",
    )
)
