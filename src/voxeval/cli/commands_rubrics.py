"""``voxeval rubrics``: draft sample-level criteria with an LLM, review them in the terminal,
merge the accepted ones into a dialogue suite, report the acceptance rate (docs/multi-turn.md,
"Rubrics: generate and review")."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.table import Table

from voxeval.cli.command_groups import command_group
from voxeval.cli.common import RedactingConsole, console, friendly_errors, print_json
from voxeval.cli.main import app
from voxeval.cli.progress import counting_progress

if TYPE_CHECKING:
    from voxeval.benchmarks.mtalk.dialogue_suite import DialogueSuite
    from voxeval.benchmarks.rubric_drafts import DraftedCriterion, RubricDrafts
from voxeval.errors import ConfigError

rubrics_app = command_group(
    "Sample-level rubric criteria: draft with an LLM, review, apply, report."
)
app.add_typer(rubrics_app, name="rubrics")
stdout = RedactingConsole()

# Review keys: the first letter of each choice.
CHOICES = {"a": "accept", "e": "edit", "r": "reject", "s": "skip", "q": "quit"}


GENERATE_HELP = (
    "Draft sample-level criteria (criteria_d_N, continuing each dialogue's) with an LLM into a "
    "review file, every one pending. Saved after each dialogue; run again to resume (drafted "
    "dialogues are skipped, failed ones retried). Exit 1 when a dialogue is left undrafted, 3 "
    "when the judge cannot be reached."
)
REVIEW_HELP = (
    "Walk the pending criteria, showing each dialogue's turns. Keys: a accept, e edit (type "
    "the new text; the draft is kept), r reject, s skip (stays pending), q quit. The file is "
    "saved after every decision, so a review can stop and resume at any time."
)
APPLY_HELP = (
    "Add the accepted and edited criteria to the suite's dialogues (sample level); pending "
    "and rejected ones are left out. Applying the same file again changes nothing."
)
STATS_HELP = "Acceptance rate, (accepted + edited) / decided, overall and per dimension."


@rubrics_app.command("generate", help=GENERATE_HELP)
@friendly_errors
def generate_command(
    suite: str = typer.Argument(..., help="dialogue suite: registered name, suite file or folder"),
    judge: Path = typer.Option(
        ..., "--judge", help="YAML with the drafting LLM: a provider spec or a file with `judge:`"
    ),
    out: Path = typer.Option(..., "-o", "--out", help="review file to write (YAML); resumed"),
    per_dialogue: int = typer.Option(3, "--per-dialogue", min=1, help="criteria per dialogue"),
    seed: int = typer.Option(0, "--seed", help="judge seed (per dialogue: seed and id)"),
) -> None:
    from voxeval.benchmarks.mtalk.dialogue_suite import load_dialogue_suite
    from voxeval.calibration import build_judge
    from voxeval.scoring.dialogues.rubric_drafting import generate_drafts

    loaded = load_dialogue_suite(suite)
    drafting_judge = build_judge(judge, "judge")
    with counting_progress() as progress:
        task = progress.add_task("drafting criteria", total=len(loaded.dialogues))

        def advance(dialogue_id: str, outcome: str) -> None:
            progress.update(task, advance=1, description=f"drafting criteria ({dialogue_id})")

        summary = generate_drafts(
            loaded.dialogues,
            drafting_judge,
            out,
            suite=str(loaded.path.resolve()),
            per_dialogue=per_dialogue,
            seed=seed,
            on_dialogue=advance,
        )
    console.print(
        f"{summary.drafted} dialogues drafted ({summary.criteria} criteria), "
        f"{summary.skipped} already in {out}; judge calls {summary.judge_calls}, "
        f"parse failures {summary.parse_failures}",
        highlight=False,
    )
    for dialogue_id, reason in summary.failed.items():
        console.print(f"[yellow]not drafted[/] {dialogue_id}: {reason}", highlight=False)
    if summary.unreachable is not None:
        console.print(
            f"[bold red]error:[/] the judge could not be reached: {summary.unreachable}; "
            "run again to resume",
            highlight=False,
        )
        raise typer.Exit(3)
    if summary.failed:
        console.print("run the command again to retry the dialogues not drafted", highlight=False)
        raise typer.Exit(1)


def _show(drafts: RubricDrafts, criterion: DraftedCriterion, position: int, total: int) -> None:
    dialogue = drafts.dialogues[criterion.dialogue]
    cap = dialogue.capability or {}
    capability = " / ".join(v for v in (cap.get("tier1"), cap.get("tier2")) if v) or "-"
    stdout.rule(f"{position}/{total}  {criterion.dialogue}  {criterion.id}")
    stdout.print(f"dimension: {dialogue.dimension}   capability: {capability}", highlight=False)
    for number, turn in enumerate(dialogue.turns, start=1):
        stdout.print(f"  user turn {number}: {turn}", highlight=False, markup=False)
    for known in dialogue.context:
        stdout.print(f"  has {known['id']}: {known['text']}", highlight=False, markup=False)
    stdout.print(f"criterion: {criterion.text}", highlight=False, markup=False)
    if criterion.text != criterion.draft:
        stdout.print(f"draft:     {criterion.draft}", highlight=False, markup=False)


def _ask_choice() -> str:
    """One of the CHOICES keys (a full word works too); asks again on anything else."""
    while True:
        answer = typer.prompt("a accept / e edit / r reject / s skip / q quit").strip().lower()
        if answer[:1] in CHOICES and answer in (answer[:1], CHOICES[answer[:1]]):
            return answer[:1]
        stdout.print(f"unknown choice {answer!r}", highlight=False, markup=False)


@rubrics_app.command("review", help=REVIEW_HELP)
@friendly_errors
def review_command(
    file: Path = typer.Argument(..., help="review file written by `voxeval rubrics generate`"),
    dialogue: str | None = typer.Option(None, "--dialogue", help="review only this dialogue"),
) -> None:
    from voxeval.benchmarks.rubric_drafts import read_drafts, write_drafts

    drafts = read_drafts(file)
    if dialogue is not None and dialogue not in drafts.dialogues:
        console.print(f"[bold red]error:[/] {file}: no drafts for dialogue {dialogue!r}")
        raise typer.Exit(2)
    pending = [
        c
        for c in drafts.criteria
        if c.status == "pending" and (dialogue is None or c.dialogue == dialogue)
    ]
    if not pending:
        stdout.print("nothing pending to review")
        return
    decided = 0
    for position, criterion in enumerate(pending, start=1):
        _show(drafts, criterion, position, len(pending))
        choice = _ask_choice()
        if choice == "q":
            break
        if choice == "s":
            continue
        if choice == "a":
            criterion.status = "accepted"
        elif choice == "r":
            criterion.status = "rejected"
        else:
            text = ""
            while not text:
                text = " ".join(typer.prompt("new text", default=criterion.text).split())
            criterion.text = text
            criterion.status = "accepted" if text == criterion.draft else "edited"
        write_drafts(file, drafts)
        decided += 1
    left = sum(c.status == "pending" for c in drafts.criteria)
    stdout.print(f"{decided} decided this session; {left} still pending", highlight=False)


@rubrics_app.command("apply", help=APPLY_HELP)
@friendly_errors
def apply_command(
    file: Path = typer.Argument(..., help="review file"),
    suite: str = typer.Argument(..., help="dialogue suite to merge into (name, file or folder)"),
    into: Path | None = typer.Option(
        None, "--into", help="write the merged suite to this folder (default: the suite's own)"
    ),
    as_json: bool = typer.Option(False, "--json", help="print the counts as JSON"),
) -> None:
    from voxeval.benchmarks.mtalk.dialogue_suite import load_dialogue_suite, write_dialogue_suite
    from voxeval.benchmarks.rubric_drafts import merge_accepted, read_drafts

    drafts = read_drafts(file)
    loaded = load_dialogue_suite(suite)
    merged, counts = merge_accepted(loaded.dialogues, drafts)
    target = into if into is not None else loaded.path.parent
    if into is None and _is_packaged(loaded.path):
        raise ConfigError(
            f"{suite} is a built-in suite (installed with voxeval): give --into FOLDER to "
            "write the reviewed copy"
        )
    written = write_dialogue_suite(
        merged, target, loaded.name, loaded.description, loaded.metadata or None
    )
    _keep_header_settings(written, loaded)
    result = {**counts, "suite": str(written)}
    if as_json:
        print_json(result)
        return
    stdout.print(
        f"{counts['added']} criteria added, {counts['already_present']} already present, "
        f"{counts['not_used']} pending or rejected left out -> {written}",
        highlight=False,
    )
    if counts["unknown_dialogue"]:
        console.print(
            f"[yellow]{counts['unknown_dialogue']} criteria name dialogues not in the suite[/]",
            highlight=False,
        )


def _is_packaged(path: Path) -> bool:
    import voxeval

    return Path(voxeval.__file__).resolve().parent in path.resolve().parents


def _keep_header_settings(suite_file: Path, loaded: DialogueSuite) -> None:
    """``write_dialogue_suite`` writes a minimal header: keep the audio settings of the suite
    that was read."""
    import yaml

    from voxeval import atomic_files
    from voxeval.audio import AudioLimits

    defaults = AudioLimits()
    extra: dict[str, Any] = {}
    if loaded.channels != "mix":
        extra["channels"] = loaded.channels
    if loaded.limits != defaults:
        extra["max_audio_s"] = loaded.limits.max_seconds
        extra["max_audio_mb"] = loaded.limits.max_megabytes
    if extra:
        header = yaml.safe_load(suite_file.read_text(encoding="utf-8"))
        atomic_files.write_text_atomic(
            suite_file, yaml.safe_dump({**header, **extra}, sort_keys=False)
        )


@rubrics_app.command("stats", help=STATS_HELP)
@friendly_errors
def stats_command(
    file: Path = typer.Argument(..., help="review file"),
    as_json: bool = typer.Option(False, "--json", help="print the counts as JSON"),
) -> None:
    from voxeval.benchmarks.rubric_drafts import acceptance, read_drafts

    found = acceptance(read_drafts(file))
    rows = [("all", found["overall"]), *found["dimensions"].items()]
    if as_json:
        print_json(
            {
                "overall": found["overall"].as_dict(),
                "dimensions": {k: v.as_dict() for k, v in found["dimensions"].items()},
            }
        )
        return
    table = Table(title=f"Rubric review: {file.name}")
    for column in ("dimension", "accepted", "edited", "rejected", "pending", "acceptance rate"):
        table.add_column(column, justify="left" if column == "dimension" else "right")
    for label, counts in rows:
        rate = "-" if counts.rate is None else f"{counts.rate:.1%} ({counts.used}/{counts.decided})"
        table.add_row(
            label,
            str(counts.accepted),
            str(counts.edited),
            str(counts.rejected),
            str(counts.pending),
            rate,
        )
    stdout.print(table)
