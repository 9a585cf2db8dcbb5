"""``analysis.md``: the headline numbers of ``analysis.json`` for a reader."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from voxeval.report.arena_blocks import short_reason


def _num(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _not_run(section: Any) -> str | None:
    return section.get("not_run") if isinstance(section, dict) else None


def _versus(section: dict[str, Any], label: str, measured: Callable[[dict[str, Any]], str]) -> str:
    """The line comparing the humans with the LLM judge: ``measured`` of the section's
    ``human_vs_llm`` entry, or why it was not run."""
    versus = section.get("human_vs_llm", {})
    if _not_run(versus):
        return f"{label}: not run ({versus['not_run']})."
    return f"{label}: {measured(versus)}."


def _mean_table(
    value: str, unit: str, stats: Iterable[tuple[str, dict[str, Any]]], digits: int = 3
) -> list[str]:
    """A system table of means with their interval and the count of independent units."""
    lines = [f"| system | {value} | CI | {unit} |", "|---|---|---|---|"]
    for name, stat in stats:
        ci = f"[{_num(stat.get('ci_low'), digits)}, {_num(stat.get('ci_high'), digits)}]"
        lines.append(f"| {name} | {_num(stat['mean'], digits)} | {ci} | {stat.get('clusters')} |")
    return lines


def _arena(section: dict[str, Any]) -> list[str]:
    lines = [f"## Arena ({section['n_votes']} votes)", ""]
    bt = section["all"].get("bt")
    if bt is None:
        lines.append(f"Ratings not computed: {section['all'].get('ratings_note')}.")
    else:
        lines += ["| system | Bradley-Terry | CI | rank | votes |", "|---|---|---|---|---|"]
        ranked = sorted(bt["systems"].items(), key=lambda kv: -kv[1]["rating"])
        for name, row in ranked:
            ci = f"[{_num(row['ci_low'], 1)}, {_num(row['ci_high'], 1)}]"
            if row.get("unbounded"):  # won or lost every vote, or not linked: no interval
                ci = f"unbounded ({short_reason(str(row['unbounded']))})"
            rank = f"{_num(row['rank_low'])}–{_num(row['rank_high'])}"
            lines.append(f"| {name} | {row['rating']:.1f} | {ci} | {rank} | {row['battles']} |")
    lines.append("")
    lines.append(
        _versus(
            section,
            "Human vs LLM judge",
            lambda v: (
                f"Cohen's kappa {_num(v.get('kappa'))}, agreement "
                f"{_num(v.get('agreement'))} over {v.get('pairs')} vote/verdict pairs"
            ),
        )
    )
    return lines


def _rubric(section: dict[str, Any]) -> list[str]:
    lines = [f"## Rubric ({section['n_values']} criterion answers)", ""]
    cases = ((name, row["case_score"]) for name, row in section["systems"].items())
    lines += _mean_table("criteria met (mean)", "items", cases)
    lines.append("")
    lines.append(
        _versus(
            section,
            "Human vs LLM judge",
            lambda v: f"Cohen's kappa {_num(v.get('kappa'))} over {v.get('n')} criterion answers",
        )
    )
    return lines


def _score(section: dict[str, Any]) -> list[str]:
    lines = [f"## Scores ({section['n_scores']} ratings)", ""]
    lines += _mean_table("mean score", "queries", section["systems"].items(), digits=2)
    lines.append("")
    lines.append(
        _versus(
            section,
            "Human vs judge checklist scores",
            lambda v: (
                f"Pearson {_num(v['overall']['pearson']['r'])}, Spearman "
                f"{_num(v['overall']['spearman']['r'])} (n = {v['overall']['n']})"
            ),
        )
    )
    return lines


def _record(section: dict[str, Any]) -> list[str]:
    lines = [f"## Recordings ({section['recorded']} of {section['prompts']} prompts)", ""]
    if section.get("suite"):
        lines.append(f"Human-voiced suite: `{section['suite']}`.")
    else:
        lines.append(f"No human-voiced suite yet; missing: {', '.join(section['missing'])}.")
    return lines


def analysis_markdown(analysis: dict[str, Any]) -> str:
    quality = analysis["quality"]
    gold = analysis["gold"]
    flagged = ", ".join(analysis["flagged_raters"]) or "none"
    lines = [
        f"# Study {analysis['study_id']} ({analysis['task']})",
        "",
        f"- responses: {analysis['responses']} ({analysis['gold_responses']} to gold items)",
        f"- raters who answered: {analysis['raters']}"
        + (
            f" (of {analysis['invited_raters']} invited)"
            if analysis.get("invited_raters", 0) > analysis["raters"]
            else ""
        )
        + f"; flagged: {flagged}",
        f"- responses excluded (flagged raters): {analysis['excluded_responses']}"
        + (" (kept: --keep-flagged)" if analysis["keep_flagged"] else ""),
        f"- gold accuracy: {_num(gold['accuracy'])} ({gold['correct']}/{gold['answers']})",
        f"- Fleiss' kappa: {_num(quality['fleiss_kappa'])} over {quality['fleiss_units']} "
        f"units x {quality['fleiss_ratings_per_unit'] or '–'} ratings",
        "",
    ]
    sections = {"arena": _arena, "rubric": _rubric, "score": _score, "record": _record}
    for name, render in sections.items():
        section = analysis.get(name)
        if section is None:
            continue
        if _not_run(section) and name != "record":
            lines += [f"## {name.capitalize()}", "", f"Not run: {section['not_run']}."]
        else:
            lines += render(section)
    return "\n".join(lines) + "\n"
