"""Render ``summary.json`` as Markdown tables: per system overall, by category, by condition,
any extra protocol results (stat dicts, pass@k curves), metrics that did not run, usage."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any


def is_stat(value: Any) -> bool:
    return isinstance(value, Mapping) and "mean" in value and "n" in value


def fmt_num(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.{digits}g}" if abs(value) < 1e4 else f"{value:.0f}"
    return str(value)


def fmt_ci(stat: Mapping[str, Any]) -> str:
    if stat.get("ci_low") is None:
        return "–"
    return f"[{fmt_num(stat['ci_low'])}, {fmt_num(stat['ci_high'])}]"


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    def esc(cell: str) -> str:
        return cell.replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return [*lines, ""]


def stat_rows(stats: Mapping[str, Any]) -> list[list[str]]:
    return [
        [name, fmt_num(s.get("mean")), fmt_ci(s), str(s.get("n", 0))]
        for name, s in stats.items()
        if is_stat(s)
    ]


def grouped_rows(groups: Mapping[str, Mapping[str, Any]]) -> list[list[str]]:
    rows = []
    for group, stats in groups.items():
        for metric, s in stats.items():
            if is_stat(s):
                rows.append([group, metric, fmt_num(s.get("mean")), fmt_ci(s), str(s.get("n", 0))])
    return rows


def walk_stats(prefix: str, value: Any) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every stat nested in a protocol's extra field, labelled by its path (``k=`` for curves)."""
    if is_stat(value):
        yield prefix, value
    elif isinstance(value, Mapping):
        for key, inner in value.items():
            yield from walk_stats(f"{prefix}.{key}" if prefix else str(key), inner)
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            label = f"k={inner['k']}" if isinstance(inner, Mapping) and "k" in inner else str(i)
            yield from walk_stats(f"{prefix} {label}", inner)


STANDARD_KEYS = ("overall", "by_category", "by_condition", "not_run", "partial", "units", "usage")


def render_system(name: str, entry: Mapping[str, Any]) -> list[str]:
    lines = [f"## System `{name}`", ""]
    units = entry.get("units")
    if isinstance(units, Mapping):
        lines += [", ".join(f"{k}: {v}" for k, v in units.items()) + " units", ""]
    header = ["metric", "mean", "95% CI", "n"]
    if entry.get("overall"):
        lines += ["### Overall", "", *table(header, stat_rows(entry["overall"]))]
    for key, title in (("by_category", "By category"), ("by_condition", "By condition")):
        groups = entry.get(key) or {}
        if groups:
            lines += [f"### {title}", ""]
            lines += table([key.removeprefix("by_"), *header], grouped_rows(groups))
    extra_rows = []
    for key, value in entry.items():
        if key in STANDARD_KEYS:
            continue
        for label, stat in walk_stats(key, value):
            extra_rows.append([label, fmt_num(stat.get("mean")), fmt_ci(stat), str(stat["n"])])
    if extra_rows:
        lines += ["### Protocol results", "", *table(["result", "mean", "95% CI", "n"], extra_rows)]
    if entry.get("not_run"):
        lines += ["### Not run", ""]
        lines += [f"- `{m}`: {reason}" for m, reason in entry["not_run"].items()] + [""]
    if entry.get("partial"):
        lines += ["### Partially run", ""]
        lines += [
            f"- `{m}`: {p['not_run']} scores missing ({p['reason']})"
            for m, p in entry["partial"].items()
        ] + [""]
    usage = entry.get("usage")
    if isinstance(usage, Mapping) and usage.get("calls"):
        lines += ["### Usage", "", *usage_table({"all": usage})]
    return lines


def usage_table(buckets: Mapping[str, Mapping[str, Any]]) -> list[str]:
    rows = [
        [
            name,
            str(u.get("calls", 0)),
            str(u.get("prompt_tokens", 0)),
            str(u.get("completion_tokens", 0)),
            str(u.get("parse_failures", 0)),
            fmt_num(u.get("parse_failure_rate")),
            "–" if u.get("cost_usd") is None else f"${u['cost_usd']:.4f}",
        ]
        for name, u in buckets.items()
    ]
    header = ["provider", "calls", "prompt tok", "completion tok", "parse fail", "rate", "cost"]
    return table(header, rows)


def render_markdown(summary: Mapping[str, Any]) -> str:
    suite = summary.get("suite") or {}
    lines = [
        f"# voxeval report: {suite.get('name', '?')}",
        "",
        f"Run `{summary.get('run_id')}` · protocol `{suite.get('protocol')}` · seed "
        f"{summary.get('seed')} · generated {summary.get('generated_at')} · provenance in "
        f"`{summary.get('provenance')}`. Means with 95% bootstrap confidence intervals; n = "
        "number of scored units.",
        "",
    ]
    for name, entry in (summary.get("systems") or {}).items():
        lines += render_system(name, entry)
    usage = summary.get("usage") or {}
    if usage.get("by_provider"):
        lines += ["## Judge and provider usage", "", *usage_table(usage["by_provider"])]
        total = usage.get("total") or {}
        unknown = total.get("calls_without_cost")
        if unknown:
            lines += [f"{unknown} calls had no configured price and are not in the cost.", ""]
    return "\n".join(lines).rstrip() + "\n"
