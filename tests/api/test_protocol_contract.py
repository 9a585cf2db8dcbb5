"""The protocol contract (``voxeval.api.EvaluationProtocol``): every hook the runner, the
report and the CLI call is declared on the base with a default, so a protocol that writes only
``plan``, ``interact`` and ``score`` runs and reports; no layer probes a protocol with
``getattr``."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.source_trees import ParsedModule, parsed_modules
from voxeval.api import Comparison, EvaluationProtocol, RunContext, WorkUnit
from voxeval.atomic_files import read_json, write_json_atomic
from voxeval.config import RunConfig
from voxeval.errors import VoxevalError
from voxeval.report.writer import build_summary, scores_csv
from voxeval.scoring.score import Score
from voxeval.store import RunStore

SRC = Path(__file__).resolve().parents[2] / "src" / "voxeval"


class Minimal(EvaluationProtocol):
    """The three required steps and nothing else."""

    name = "minimal-contract"

    def plan(self, ctx: RunContext) -> list[WorkUnit]:
        return [WorkUnit("a", system.name) for system in ctx.config.systems]

    def interact(self, unit: WorkUnit, ctx: RunContext) -> None:
        write_json_atomic(ctx.store.folder.unit_dir(unit) / "reply.json", {"text": "hello"})

    def score(self, unit: WorkUnit, ctx: RunContext, metrics: list[str] | None) -> dict[str, Score]:
        reply = read_json(ctx.store.folder.unit_dir(unit) / "reply.json")
        return {"length": Score(float(len(reply["text"])))}


class Speaking(Minimal):
    """A protocol with report sections of its own."""

    name = "speaking-contract"

    def confounded(self, ctx: RunContext) -> dict[str, Any]:
        return {"gender": {"engines": ["piper"], "separated": False}}

    def item_attributes(self, ctx: RunContext) -> dict[str, dict[str, str]]:
        return {"a": {"query_id": "q7", "profile": "child"}}


def make_ctx(tmp_path: Path, protocol: EvaluationProtocol) -> RunContext:
    config = RunConfig(suite="x", systems=[{"name": "s", "type": "scripted"}])
    ctx = RunContext(config=config, store=RunStore(tmp_path / "run"), seed=3)
    ctx.protocol = protocol
    return ctx


def test_the_required_steps_are_enough_for_every_hook(tmp_path: Path) -> None:
    protocol = Minimal()
    ctx = make_ctx(tmp_path, protocol)
    (unit,) = protocol.plan(ctx)
    ctx.store.units.record_items([unit])
    # the default interact_async commits the start (the attempt counts) and interacts
    asyncio.run(protocol.interact_async(unit, ctx))
    (record,) = ctx.store.units.records()
    assert (record.status, record.attempts) == ("running", 1)
    assert read_json(ctx.store.folder.unit_dir(unit) / "reply.json") == {"text": "hello"}
    ctx.store.units.complete(unit, protocol.score(unit, ctx, None))

    assert protocol.comparison_steps == () and protocol.uses_system_call_slots is False
    assert protocol.record_type is None and protocol.system_needs is None
    assert protocol.check_plan(ctx.config) == []
    assert protocol.default_comparisons(ctx.config) == []
    assert protocol.comparisons(ctx, ["x"], [unit]) == []
    with pytest.raises(VoxevalError, match="minimal-contract has no comparison step 'x'"):
        protocol.compare(Comparison("x", "k", (unit,)), ctx)
    summary = build_summary(ctx)  # the standard summary of the stored scores
    assert summary["s"]["overall"]["length"]["mean"] == 5.0
    assert summary["s"]["overall"]["length"]["n"] == 1
    for section in ("confounded", "input_intelligibility", "voices"):
        assert summary[section] == {}
    assert "\na,,,,,s,0,clean,,length,5.0," in scores_csv(ctx)
    ctx.store.close()


def test_report_sections_come_from_the_protocols_hooks(tmp_path: Path) -> None:
    protocol = Speaking()
    ctx = make_ctx(tmp_path, protocol)
    (unit,) = protocol.plan(ctx)
    ctx.store.units.record_items([unit])
    ctx.store.recorder.start(unit)
    protocol.interact(unit, ctx)
    ctx.store.units.complete(unit, protocol.score(unit, ctx, None))
    summary = build_summary(ctx)
    assert summary["confounded"] == {"gender": {"engines": ["piper"], "separated": False}}
    assert "\na,q7,child,,,s,0,clean,,length,5.0," in scores_csv(ctx)
    ctx.store.close()


def _probes(module: ParsedModule) -> list[str]:
    """``getattr``/``hasattr`` calls on something named like a protocol, in ``module``."""
    found = []
    for node in module.nodes:
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr")
            and node.args
            and "protocol" in ast.unparse(node.args[0]).lower()
        ):
            found.append(f"{module.module}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_layer_probes_a_protocol_with_getattr() -> None:
    probes = [p for module in parsed_modules(SRC) for p in _probes(module)]
    assert probes == []
