"""Every figure a summary supports, in report order, grouped by family; for a family the
protocol leads a reader to expect but the data do not support, a one-line reason instead.
Figures are drawn from ``summary.json`` alone, so they show exactly its numbers."""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping

from voxeval.json_types import JSONReadObject, JSONReadValue
from voxeval.report.figures.arena import bt_forest, win_rate_heatmap
from voxeval.report.figures.bars import grouped_bars
from voxeval.report.figures.histograms import histogram_figure
from voxeval.report.figures.lines import Series, stat_lines
from voxeval.report.figures.pareto import eva_scatter
from voxeval.report.figures.radar import MIN_AXES, radar
from voxeval.report.figures.series import has_mean
from voxeval.report.figures.style import condition_order, slug
from voxeval.report.figures.svg import FigureGroup
from voxeval.report.json_fields import objects, section, sections

MAX_METRICS = 4  # bar and line figures per grouping; every metric stays in the tables
# The metrics the papers lead with come first when choosing which ones to draw.
HEADLINE = (
    "task_completion",
    "checklist",
    "rubric",
    "assertions",
    "turn_taking",
    "response_latency",
    "faithfulness",
    "conversation_progression",
    "wer",
    "stt_wer",
    "mos",
)
Entries = Mapping[str, JSONReadObject]


def _entries(summary: JSONReadObject) -> dict[str, JSONReadObject]:
    return dict(sections(summary.get("systems")))


def _stats(value: JSONReadValue) -> dict[str, JSONReadObject]:
    """The stats of a ``{label: stat}`` object (the figures draw only stats)."""
    return dict(sections(value))


def _metrics(entries: Entries) -> list[str]:
    found = list(dict.fromkeys(m for e in entries.values() for m in section(e.get("overall"))))
    return sorted(found, key=lambda m: HEADLINE.index(m) if m in HEADLINE else len(HEADLINE))


def _groups(entries: Entries, key: str, metric: str) -> list[str]:
    found = [
        g
        for e in entries.values()
        for g, stats in sections(e.get(key))
        if has_mean(stats.get(metric))
    ]
    return list(dict.fromkeys(found))


def _grouped(entries: Entries, key: str, metric: str) -> dict[str, dict[str, JSONReadObject]]:
    return {
        name: {
            g: stat
            for g, stats in _stats(e.get(key)).items()
            if isinstance(stat := stats.get(metric), Mapping)
        }
        for name, e in entries.items()
    }


def grouping_figures(entries: Entries) -> list[FigureGroup]:
    metrics = _metrics(entries)
    shown, rest = metrics[:MAX_METRICS], metrics[MAX_METRICS:]
    omitted = (
        [f"Only the first {MAX_METRICS} metrics are drawn; {', '.join(rest)} are in the tables."]
        if rest
        else []
    )
    out = []
    for key, label in (("by_category", "category"), ("by_condition", "condition")):
        group = FigureGroup(f"By {label}")
        for metric in shown:
            groups = _groups(entries, key, metric)
            if key == "by_condition":
                groups = condition_order(groups)
            if len(groups) >= 2:
                name = f"{label}-bars-{slug(metric)}"
                title = f"{metric} by {label} (mean, 95% CI)"
                group.figures.append(
                    grouped_bars(name, title, _grouped(entries, key, metric), groups, metric)
                )
        if group.figures:
            group.notes += omitted
            out.append(group)
    return out


def noise_impact(entries: Entries, protocol: str | None) -> FigureGroup:
    group = FigureGroup("Noise impact")
    conditions: list[str] = []
    for metric in _metrics(entries)[:MAX_METRICS]:
        conditions = condition_order(_groups(entries, "by_condition", metric))
        if len(conditions) < 2:
            continue
        grouped = _grouped(entries, "by_condition", metric)
        series = [Series(s, points, i) for i, (s, points) in enumerate(grouped.items())]
        group.figures.append(
            stat_lines(
                f"noise-impact-{slug(metric)}",
                f"{metric} by condition, per system",
                series,
                conditions,
                xlabel="condition",
                ylabel=metric,
            )
        )
    if not group.figures and protocol in ("single_turn", "live_call"):
        group.notes.append("Not drawn: the run scored a single condition.")
    return group


def category_radar(entries: Entries) -> FigureGroup:
    group = FigureGroup("Radar by category")
    for metric in _metrics(entries):
        axes = _groups(entries, "by_category", metric)
        if len(axes) >= MIN_AXES:
            title = f"{metric} by category"
            grouped = _grouped(entries, "by_category", metric)
            group.figures.append(
                radar(f"radar-category-{slug(metric)}", title, grouped, axes, metric)
            )
            break
    return group


def mos_figures(entries: Entries, protocol: str | None) -> FigureGroup:
    group = FigureGroup("MOS distribution")
    hists = {
        n: section(section(e.get("distributions")).get("mos"))
        for n, e in entries.items()
        if section(e.get("distributions")).get("mos")
    }
    if hists:
        title = "Predicted MOS per system"
        group.figures.append(histogram_figure("mos-distribution", title, hists, "MOS (1-5)"))
    elif protocol == "single_turn":
        group.notes.append("Not drawn: the mos metric was not scored in this run.")
    return group


def latency_figures(entries: Entries, protocol: str | None) -> FigureGroup:
    group = FigureGroup("Latency")
    dists = {n: section(e.get("distributions")) for n, e in entries.items()}
    fields = list(dict.fromkeys(f for d in dists.values() for f in section(d.get("latency"))))
    for field in fields:
        hists = {
            n: section(section(d.get("latency")).get(field))
            for n, d in dists.items()
            if field in section(d.get("latency"))
        }
        title = f"Latency distribution: {field}"
        group.figures.append(
            histogram_figure(f"latency-histogram-{slug(field)}", title, hists, f"{field} (seconds)")
        )
    turn_fields = list(
        dict.fromkeys(f for d in dists.values() for f in section(d.get("latency_by_turn")))
    )
    for field in turn_fields:
        per_system = {
            n: _stats(section(d.get("latency_by_turn")).get(field)) for n, d in dists.items()
        }
        turns = sorted({t for p in per_system.values() for t in p}, key=lambda t: int(t[1:]))
        if not turns:
            continue
        series = [Series(s, p, i) for i, (s, p) in enumerate(per_system.items())]
        xlabel = "answered turn of the call" if protocol == "live_call" else "dialogue turn"
        group.figures.append(
            stat_lines(
                f"latency-by-turn-{slug(field)}",
                f"Latency per turn: {field}",
                series,
                turns,
                xlabel=xlabel,
                ylabel=f"{field} (seconds)",
            )
        )
    if not group.figures and protocol in ("single_turn", "multi_turn", "live_call"):
        group.notes.append("Not drawn: no reply timings were stored in this run.")
    return group


def passk_figures(entries: Entries) -> FigureGroup:
    group = FigureGroup("pass@k and pass^k")
    series: list[Series] = []
    ks: list[str] = []
    for i, (system, entry) in enumerate(entries.items()):
        for style, key, label in ((0, "pass_at_k", "pass@k"), (1, "pass_hat_k", "pass^k")):
            points = {str(p["k"]): p for p in objects(entry.get(key))}
            ks += [k for k in points if k not in ks]
            if points:
                series.append(Series(f"{system} {label}", points, i, style))
    if series:
        ks.sort(key=int)
        group.figures.append(
            stat_lines(
                "passk-curves",
                "pass@k (solid) and pass^k (dashed)",
                series,
                ks,
                xlabel="k (trials drawn)",
                ylabel="probability",
                ylim=(-0.05, 1.05),
            )
        )
    else:
        group.notes.append("Not drawn: task_completion did not run on repeated trials.")
    return group


def _composite_point(entry: JSONReadObject, name: str, condition: str) -> JSONReadObject | None:
    composite = section(section(entry.get("composites")).get(name))
    block = section(section(composite.get("by_condition")).get(condition))
    stat = block.get("pass_at_1")
    return stat if block.get("claimed") and has_mean(stat) else None


def eva_figures(entries: Entries) -> FigureGroup:
    group = FigureGroup("Accuracy against experience (EVA-A vs EVA-X)")
    conditions = [
        c
        for e in entries.values()
        for c in section(section(section(e.get("composites")).get("eva_a")).get("by_condition"))
    ]
    condition = condition_order(list(dict.fromkeys(conditions)))[:1]
    points = {}
    for system, entry in entries.items():
        if condition:
            a = _composite_point(entry, "eva_a", condition[0])
            x = _composite_point(entry, "eva_x", condition[0])
            if a is not None and x is not None:
                points[system] = (a, x)
    if points:
        title = f"EVA-A vs EVA-X pass@1 ({condition[0]})"
        group.figures.append(eva_scatter("eva-pareto", title, points, condition[0]))
    else:
        group.notes.append(
            "Not drawn: no system has both EVA-A and EVA-X claimed (see the "
            "Composites tables for what did not run)."
        )
    return group


def rubric_figures(entries: Entries) -> list[FigureGroup]:
    rubrics = {
        n: section(e.get("rubric"))
        for n, e in entries.items()
        if isinstance(e.get("rubric"), Mapping)
    }
    radar_group, turn_group = FigureGroup("Rubric by dimension"), FigureGroup("Rubric per turn")
    dims = list(dict.fromkeys(d for r in rubrics.values() for d in section(r.get("by_dimension"))))
    if len(dims) >= MIN_AXES:
        grouped = {
            n: {
                d: stat
                for d, b in sections(r.get("by_dimension"))
                if isinstance(stat := b.get("model_score"), Mapping)
            }
            for n, r in rubrics.items()
        }
        radar_group.figures.append(
            radar(
                "radar-rubric-dimensions",
                "Rubric model score x100 by dimension",
                grouped,
                dims,
                "model score x100",
            )
        )
    elif rubrics:
        radar_group.notes.append(f"Radar not drawn: it needs {MIN_AXES} or more dimensions.")
    capabilities = {
        n: {c: stat for _, b in sections(r.get("by_dimension"))
            for c, stat in sections(b.get("by_capability"))}
        for n, r in rubrics.items()
    }  # fmt: skip
    caps = list(dict.fromkeys(c for by_cap in capabilities.values() for c in by_cap))
    if len(caps) >= MIN_AXES:
        radar_group.figures.append(
            radar("radar-rubric-capabilities", "Rubric model score x100 by capability",
                  capabilities, caps, "model score x100")
        )  # fmt: skip
    per_system = {n: _stats(r.get("turns")) for n, r in rubrics.items()}
    turns = sorted({t for p in per_system.values() for t in p}, key=lambda t: int(t[1:]))
    if turns:
        series = [Series(s, p, i) for i, (s, p) in enumerate(per_system.items())]
        turn_group.figures.append(
            stat_lines(
                "rubric-per-turn",
                "Rubric score x100 after each turn (T1..Tn)",
                series,
                turns,
                xlabel="dialogue truncated after turn",
                ylabel="score x100",
            )
        )
    elif rubrics:
        turn_group.notes.append("Not drawn: rubric_turns was not scored in this run.")
    return [radar_group, turn_group]


def arena_figures(arena: JSONReadValue) -> FigureGroup:
    group = FigureGroup("Arena")
    if not isinstance(arena, Mapping):
        group.notes.append("Not drawn: this run has no arena comparisons.")
        return group
    for dimension, block in sections(arena.get("dimensions")):
        if block.get("win_matrix"):
            group.figures.append(
                win_rate_heatmap(
                    f"arena-win-rates-{slug(dimension)}",
                    f"Win rates: {dimension}",
                    _stats(block["win_matrix"]),
                )
            )
        bt = block.get("bt")
        if isinstance(bt, Mapping) and bt.get("systems"):
            group.figures.append(
                bt_forest(
                    f"arena-bradley-terry-{slug(dimension)}",
                    f"Bradley-Terry ratings: {dimension}",
                    bt,
                )
            )
        elif block.get("ratings_note"):
            group.notes.append(f"{dimension}: ratings not drawn ({block['ratings_note']}).")
    return group


FIGURES_EXTRA_NOTE = (
    "Figures not drawn: they need matplotlib, which is not installed; install the figures "
    "extra: pip install 'voxeval[figures]'. The tables below hold every number."
)


def build_figures(summary: JSONReadObject) -> list[FigureGroup]:
    """The figure groups of a summary, each with figures or with a note (empty ones left out).
    Without matplotlib (the ``figures`` extra) one group says so and names the extra."""
    if importlib.util.find_spec("matplotlib") is None:
        return [FigureGroup("Figures", notes=[FIGURES_EXTRA_NOTE])]
    entries = _entries(summary)
    named = section(summary.get("suite")).get("protocol")
    protocol = named if isinstance(named, str) else None
    groups = grouping_figures(entries)
    groups.append(noise_impact(entries, protocol))
    if protocol != "multi_turn":
        groups.append(category_radar(entries))
    groups.append(mos_figures(entries, protocol))
    groups.append(latency_figures(entries, protocol))
    if protocol == "live_call" or any("pass_at_k" in e for e in entries.values()):
        groups.append(passk_figures(entries))
    if protocol == "live_call" or any(e.get("composites") for e in entries.values()):
        groups.append(eva_figures(entries))
    groups += rubric_figures(entries)
    if protocol == "multi_turn" or "arena" in summary:
        groups.append(arena_figures(summary.get("arena")))
    return [g for g in groups if g.figures or g.notes]
