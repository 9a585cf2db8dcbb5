"""``voxeval judges``: check whether a judge endpoint is fit before trusting its scores."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.progress import TaskID
from rich.table import Table

from voxeval.cli.command_groups import command_group
from voxeval.cli.common import RedactingConsole, console, friendly_errors, print_json
from voxeval.cli.main import app
from voxeval.cli.progress import counting_progress

if TYPE_CHECKING:
    from voxeval.calibration.dev_set import DevSet

judges_app = command_group(
    "LLM judges: calibrate a judge endpoint against labelled development sets."
)
app.add_typer(judges_app, name="judges")
stdout = RedactingConsole()
SHOWN_FAILURES = 10

_CALIBRATE_TEXT = """\
Run a judge over labelled development sets and report how well it agrees with the labels.

The sets are generated offline from the built-in live-call domains (clinic, helpdesk,
utility): for scenarios picked with --seed, the correct call (the scripted agent's expected
path) is a clean example for every metric, and copies with one injected defect are examples
the defect's metric must fail: fabricated tool parameter, misread tool result, skipped
verification (faithfulness); redundant questions (conversation_progression); verbose turns
(conciseness); markdown, raw ids and a URL in a turn (speakability); a caller abandoning its
goal (user_behavioural_fidelity); with --audio-judge, a turn whose audio says an entity one
character off its intended text (agent_speech_fidelity, rendered with the embedded TTS).

Each example is scored by the registered metric exactly as in a run. Scenarios are added
until every metric and every dimension has at least --min-items labelled items (default 30,
a third of them defects where a defect can flag it), with subtle defects (one value, one
character, one turn) beside obvious ones. Per metric and per dimension the report gives n
(examples the judge answered), the base rate (share of defect examples), accuracy and
Cohen's kappa each with a 95% interval that treats the scenario as the independent unit, F1
of the defect class, the judge's parse failures and a verdict in plain words: fit (the whole
kappa interval at or above 0.6), unfit (below it), or cannot tell, saying when the set is too
small to tell a fit judge from an unfit one. Read kappa first: 0 means no better than chance
(a judge that always says "pass" gets accuracy = 1 - base rate and kappa 0), 1 perfect
agreement. Examples the judge failed to answer are counted and listed,
never scored. Exit 3 when a judge could not be reached at all."""
# one line per paragraph: the help formatter keeps line breaks as they are written
CALIBRATE_HELP = "\n\n".join(" ".join(p.split()) for p in _CALIBRATE_TEXT.split("\n\n"))


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _with_ci(value: float | None, ci: list[float] | None) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}" if ci is None else f"{value:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]"


def _row(table: Table, label: str, stats: dict[str, Any], extra: dict[str, Any]) -> None:
    table.add_row(
        label,
        str(stats["n"]),
        _pct(stats["base_rate"]),
        _with_ci(stats["accuracy"], stats.get("accuracy_ci")),
        _pct(stats["f1"]),
        _with_ci(stats["kappa"], stats.get("kappa_ci")),
        str(stats.get("verdict", "")),
        str(extra.get("parse_failures", "")),
        str(extra.get("judge_failures", "")),
    )


def _statements(report: dict[str, Any]) -> list[str]:
    """One plain line per metric and dimension: fit, unfit, or why it cannot tell."""
    lines = []
    for metric, stats in report["metrics"].items():
        lines.append(f"{metric}: {stats.get('statement', '')}")
        lines += [f"  {name}: {d.get('statement', '')}" for name, d in stats["dimensions"].items()]
    return lines


def _table(report: dict[str, Any]) -> Table:
    table = Table(title=f"Judge calibration (seed {report['seed']})")
    for column in ("metric / dimension", "n", "base rate", "accuracy [95% CI]", "F1"):
        table.add_column(column, justify="left" if column.startswith("metric") else "right")
    table.add_column("kappa [95% CI]", justify="right")
    table.add_column("verdict", justify="left")
    table.add_column("parse failures", justify="right")
    table.add_column("judge failures", justify="right")
    for metric, stats in report["metrics"].items():
        _row(table, metric, stats, stats)
        for name, dim in stats["dimensions"].items():
            _row(table, f"  {name}", dim, {})
    return table


@judges_app.command("calibrate", help=CALIBRATE_HELP)
@friendly_errors
def calibrate_command(
    judge: Path = typer.Option(
        ..., "--judge", help="YAML with the text judge: a provider spec or a file with `judge:`"
    ),
    audio_judge: Path | None = typer.Option(
        None,
        "--audio-judge",
        help="YAML with an audio-capable judge (a spec or `audio_judge:`); adds the audio sets",
    ),
    metrics: str | None = typer.Option(
        None, "--metrics", help="comma-separated metrics to calibrate (default: all)"
    ),
    per_defect: int = typer.Option(
        3, "--per-defect", min=1, help="at least this many examples per defect type"
    ),
    min_items: int = typer.Option(
        30,
        "--min-items",
        min=1,
        help="at least this many labelled items per metric and per dimension (a third of "
        "them defects where a defect can flag it)",
    ),
    seed: int = typer.Option(0, "--seed", help="picks the scenarios and the edits"),
    out: Path = typer.Option(
        Path("judge-calibration"), "--out", help="folder for calibration.json and answers.jsonl"
    ),
    concurrency: int = typer.Option(4, "--concurrency", min=1, help="judge requests at once"),
    as_json: bool = typer.Option(False, "--json", help="print calibration.json on stdout"),
) -> None:
    from voxeval.calibration import build_judge, calibrate, plan_metrics, write_results

    requested = [m.strip() for m in metrics.split(",") if m.strip()] if metrics else None
    plan = plan_metrics(requested, audio_judge=audio_judge is not None)
    text_judge = build_judge(judge, "judge")
    sound_judge = build_judge(audio_judge, "audio_judge") if audio_judge is not None else None
    for metric, reason in plan.skipped.items():
        console.print(f"[yellow]skipped[/] {metric}: {reason}", highlight=False)
    if not plan.metrics:
        console.print("[bold red]error:[/] no metric left to calibrate", highlight=False)
        raise typer.Exit(2)
    with counting_progress() as progress:
        building = progress.add_task("building development sets", total=None)
        task: list[TaskID] = []

        def built(dev_set: DevSet) -> None:
            progress.remove_task(building)
            task.append(progress.add_task("judging examples", total=len(dev_set.examples)))
            for defect, missing in dev_set.shortfall.items():
                console.print(
                    f"[yellow]note[/] {defect}: {missing} example(s) short, the built-in "
                    "scenarios offer no more places for it",
                    highlight=False,
                )
            for metric, parts in dev_set.items_short.items():
                short = ", ".join(f"{part} {left}" for part, left in parts.items())
                console.print(
                    f"[yellow]note[/] {metric}: labelled items short of --min-items "
                    f"({short}); the built-in scenarios ran out",
                    highlight=False,
                )

        result = calibrate(
            plan,
            text_judge,
            sound_judge,
            per_defect=per_defect,
            min_items=min_items,
            seed=seed,
            concurrency=concurrency,
            on_built=built,
            on_done=lambda _: progress.advance(task[0]),
        )
    write_results(result, out)
    if as_json:
        print_json(result.report)
    else:
        stdout.print(_table(result.report))
        for line in _statements(result.report):
            stdout.print(line, soft_wrap=True, highlight=False)
        console.print(f"written: {out / 'calibration.json'}, {out / 'answers.jsonl'}")
    failures = [f for stats in result.report["metrics"].values() for f in stats["failures"]]
    for failure in failures[:SHOWN_FAILURES]:
        console.print(
            f"[red]judge failure[/] {failure['id']}: {failure['reason']}", highlight=False
        )
    if len(failures) > SHOWN_FAILURES:
        console.print(f"... {len(failures) - SHOWN_FAILURES} more judge failures in answers.jsonl")
    if result.unreachable_metrics:
        console.print(
            "[bold red]error:[/] the judge answered no example of "
            f"{', '.join(result.unreachable_metrics)} (unreachable or never in format)",
            highlight=False,
        )
        raise typer.Exit(3)
