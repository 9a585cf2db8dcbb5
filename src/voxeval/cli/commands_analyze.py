"""``voxeval analyze bias|agreement RUN``: judge-bias and agreement tables from a run's
stored arena verdicts (and rubric scores), optionally with imported human votes
(see docs/judge-bias.md). ``voxeval analyze timing RUN``: the simulated caller's timing in a
live-call run beside human conversation (see docs/live-calls.md)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from voxeval.analysis.agreement.preference_bias import SIGNIFICANCE_LEVEL, clusters_needed
from voxeval.analysis.agreement.rubric_exclusion import DEFAULT_EXCLUSION_RESAMPLES
from voxeval.analysis.ratings.human_votes import load_rubric_values, load_votes
from voxeval.analysis.ratings.pairwise_judgement import PairwiseJudgement
from voxeval.atomic_files import write_json_atomic
from voxeval.cli.command_groups import command_group
from voxeval.cli.common import RedactingConsole, friendly_errors, print_json
from voxeval.cli.main import app
from voxeval.errors import ConfigError
from voxeval.protocols.arena.judgements import analyze_agreement, analyze_bias
from voxeval.store import RunStore
from voxeval.store.run_store import is_run_folder

analyze_app = command_group(
    "Judge bias and agreement of a multi-turn run's arena verdicts; the simulated caller's "
    "timing in a live-call run."
)
app.add_typer(analyze_app, name="analyze")
stdout = RedactingConsole()
BIAS_FILE = "judge_bias.json"
AGREEMENT_FILE = "judge_agreement.json"
TIMING_FILE = "caller_timing.json"

RUN_ARG = typer.Argument(..., help="run folder (with stored arena comparisons)")
VOTES_OPT = typer.Option(
    None, "--votes", help="human votes to include (CSV or JSONL, see docs/judge-bias.md)"
)
RUBRIC_VOTES_OPT = typer.Option(
    None,
    "--rubric-votes",
    help="human per-criterion rubric values (CSV or JSONL, see docs/judge-bias.md)",
)
RESAMPLES_OPT = typer.Option(
    DEFAULT_EXCLUSION_RESAMPLES, "--exclusion-resamples", min=1,
    help="resamples per share of dropped criteria in the rubric exclusion",
)  # fmt: skip
JSON_OPT = typer.Option(False, "--json", help="print the tables as JSON")


def _open(run: Path) -> RunStore:
    if not is_run_folder(run):
        raise ConfigError(f"{run}: not a voxeval run folder (no run.yaml with a run_id)")
    return RunStore(run)


def _votes(path: Path | None) -> list[PairwiseJudgement]:
    return load_votes(path) if path is not None else []


def _write(store: RunStore, name: str, data: dict[str, Any]) -> Path:
    target = store.report_dir / name
    write_json_atomic(target, data)
    return target


def _run_seed(store: RunStore) -> int:
    return int((store.run_yaml.stored_config() or {}).get("seed") or 0)  # the run's seed


def _analyse_run(
    run: Path, name: str, analyse: Callable[[RunStore], dict[str, Any]]
) -> tuple[dict[str, Any], Path]:
    """Open the run, analyse it, close it, and write the result to report/NAME."""
    store = _open(run)
    try:
        data = analyse(store)
    finally:
        store.close()
    return data, _write(store, name, data)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * float(value):.1f}"


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{float(value):.{digits}f}"


def _p_cell(part: dict[str, Any]) -> str:
    """The p-value, marked when the sample is too small for the test to decide."""
    p = _num(part.get("p_value"), 4)
    if part.get("decidable") is False:
        test = part.get("test") or {}
        return (
            f"{p} (cannot decide: {test.get('clusters_leaning')} < {test.get('clusters_needed')})"
        )
    return p


@analyze_app.command("bias")
@friendly_errors
def bias(run: Path = RUN_ARG, votes: Path | None = VOTES_OPT, as_json: bool = JSON_OPT) -> None:
    """Position (top/bottom) and length (long/short) preference rates of each rater, with
    Delta, Wilson 95% intervals and a permutation test; written to report/judge_bias.json."""

    def analyse(store: RunStore) -> dict[str, Any]:
        seed = _run_seed(store)
        return analyze_bias(store, _votes(votes), seed=seed)

    data, target = _analyse_run(run, BIAS_FILE, analyse)
    if as_json:
        print_json(data)
        return
    table = Table(title=f"Judge bias ({data['n_judgements']} judgements)")
    for column in ("dimension", "rater", "bias", "p1 %", "p2 %", "Delta", "p", "n", "ties"):
        table.add_column(column)
    for dimension, summary in [("all", data["all"]), *data["dimensions"].items()]:
        for rater, parts in [*summary["raters"].items(), ("pooled", summary["pooled"])]:
            for kind in ("position", "length"):
                part = parts[kind]
                table.add_row(
                    dimension or "-",
                    rater,
                    kind,
                    _pct((part.get("p1") or {}).get("rate")),
                    _pct((part.get("p2") or {}).get("rate")),
                    _num(part.get("delta")),
                    _p_cell(part),
                    str(part.get("n", "-")),
                    str(part.get("n_ties", "-")),
                )
    stdout.print(table)
    if _any_undecidable(data):
        stdout.print(
            f"cannot decide: the sign-flip test cannot reach p < {SIGNIFICANCE_LEVEL:g} with "
            f"fewer than {clusters_needed(SIGNIFICANCE_LEVEL)} dialogues whose verdicts lean "
            "one way; a p-value marked so says nothing about bias either way"
        )
    stdout.print(f"written: {target}")


def _any_undecidable(data: dict[str, Any]) -> bool:
    summaries = [data["all"], *data["dimensions"].values()]
    return any(
        part.get("decidable") is False
        for summary in summaries
        for parts in [*summary["raters"].values(), summary["pooled"]]
        for part in (parts["position"], parts["length"])
    )


@analyze_app.command("agreement")
@friendly_errors
def agreement(
    run: Path = RUN_ARG,
    votes: Path | None = VOTES_OPT,
    rubric_votes: Path | None = RUBRIC_VOTES_OPT,
    exclusion_resamples: int = RESAMPLES_OPT,
    as_json: bool = JSON_OPT,
) -> None:
    """Arena vs rubric kappa, Spearman between rankings, rating vs win rate, (with human
    votes) pseudo agreement and the bootstrap rubric exclusion; written to
    report/judge_agreement.json."""

    def analyse(store: RunStore) -> dict[str, Any]:
        seed = _run_seed(store)
        return analyze_agreement(
            store,
            _votes(votes),
            load_rubric_values(rubric_votes) if rubric_votes is not None else [],
            seed=seed,
            exclusion_resamples=exclusion_resamples,
        )

    data, target = _analyse_run(run, AGREEMENT_FILE, analyse)
    if as_json:
        print_json(data)
        return
    table = Table(title="Judge agreement")
    for column in ("dimension", "table", "between", "value", "n"):
        table.add_column(column)
    for dimension, part in [("all", data["all"]), *data["dimensions"].items()]:
        name = dimension or "-"
        for rater, kappa in (part.get("arena_vs_rubric") or {}).items():
            table.add_row(name, "arena vs rubric kappa", rater, _num(kappa.get("kappa")),
                          str(kappa.get("n", "-")))  # fmt: skip
        for pair, rho in (part.get("rankings") or {}).items():
            table.add_row(
                name, "ranking spearman", pair, _num(rho.get("rho")), str(rho.get("n", "-"))
            )
        rating = part.get("rating_vs_win_rate")
        if rating:
            table.add_row(name, "rating vs win rate", str(part.get("rating")),
                          _num(rating.get("rho")), str(rating.get("n", "-")))  # fmt: skip
        for rater, pseudo in (part.get("pseudo_agreement") or {}).items():
            share = pseudo.get("share_at_or_above_threshold")
            table.add_row(name, "pseudo agreement >= threshold", f"humans vs {rater}",
                          _num(share), str(len(pseudo.get("pairs") or [])))  # fmt: skip
    stdout.print(table)
    _print_exclusion(data["rubric_exclusion"])
    stdout.print(f"written: {target}")


def _print_exclusion(exclusion: dict[str, Any]) -> None:
    if "not_run" in exclusion:
        stdout.print(f"rubric exclusion: not run ({exclusion['not_run']})")
        return
    table = Table(title="Bootstrap rubric exclusion (Spearman rho, mean and interval)")
    for column in ("rater", "dropped %", "vs full", "vs arena", "defined"):
        table.add_column(column)
    for rater, part in exclusion.items():
        if "not_run" in part:
            table.add_row(rater, "-", f"not run: {part['not_run']}", "-", "-")
            continue
        for step in part["curve"]:
            full, arena = step["vs_full"], step.get("vs_arena") or {}
            table.add_row(
                rater,
                _pct(step["fraction"]),
                f"{_num(full['mean'])} [{_num(full['ci_low'])}, {_num(full['ci_high'])}]",
                _num(arena.get("mean")),
                str(full["n_defined"]),
            )
    stdout.print(table)


@analyze_app.command("timing")
@friendly_errors
def timing(
    run: Path = typer.Argument(..., help="run folder of a live-call run"),
    as_json: bool = JSON_OPT,
) -> None:
    """The simulated caller's response offsets (start of its turn minus the end of the agent's;
    negative: overlap), pauses inside its turns and backchannels per minute of agent speech,
    per persona, beside human conversation (Stivers et al. 2009; Levinson & Torreira 2015);
    written to report/caller_timing.json."""
    from voxeval.protocols.caller_timing_report import run_caller_timing

    data, target = _analyse_run(run, TIMING_FILE, run_caller_timing)
    if as_json:
        print_json(data)
        return
    for persona, summary in data["personas"].items():
        _print_timing(persona, summary)
    for problem in data["unreadable"]:
        stdout.print(f"[yellow]not read:[/] {problem}")
    stdout.print(f"written: {target}")


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{1000 * float(value):.0f}"


def _verdict(flag: bool | None) -> str:
    return "-" if flag is None else ("yes" if flag else "[red]no[/]")


def _print_timing(persona: str, summary: dict[str, Any]) -> None:
    offsets, pauses = summary["response_offset_s"], summary["pause_s"]
    ok, ref = summary["in_human_range"], summary["human_reference"]
    lo, hi = ref["response_offset_s"]["mean_range"]
    p_lo, p_hi = ref["pause_s"]["median_range"]
    b_lo, b_hi = ref["backchannels_per_min"]["range"]
    n_off, n_pause = str(offsets["n"]), str(pauses["n"])
    rows = [
        ("response offset, mode", n_off, f"{_ms(offsets.get('mode'))} ms",
         f"{_ms(offsets.get('p10'))} to {_ms(offsets.get('p90'))} ms",
         f"~{_ms(ref['response_offset_s']['mode'])} ms", _verdict(ok["offset_mode"])),
        ("response offset, mean", n_off, f"{_ms(offsets.get('mean'))} ms", "",
         f"{_ms(lo)}-{_ms(hi)} ms (10 languages)", _verdict(ok["offset_mean"])),
        ("response offset, median", n_off, f"{_ms(offsets.get('median'))} ms", "", "", ""),
        ("overlaps (offset < 0)", n_off, f"{_pct(offsets.get('overlap_share'))} %", "", "", ""),
        ("pause in a turn, median", n_pause, f"{_ms(pauses.get('median'))} ms",
         f"{_ms(pauses.get('p10'))} to {_ms(pauses.get('p90'))} ms",
         f"{_ms(p_lo)}-{_ms(p_hi)} ms", _verdict(ok["pause_median"])),
        ("backchannels per min of agent speech", str(summary["backchannels"]),
         _num(summary["backchannels_per_min"], 1), "", f"{b_lo:.0f}-{b_hi:.0f}",
         _verdict(ok["backchannel_rate"])),
    ]  # fmt: skip
    table = Table(title=f"Caller timing, persona {persona} ({summary['calls']} calls)")
    for column in ("figure", "n", "simulated", "p10-p90", "human reference", "in range"):
        table.add_column(column)
    for row in rows:
        table.add_row(*row)
    stdout.print(table)
    sources = [ref[k]["source"] for k in ("response_offset_s", "pause_s", "backchannels_per_min")]
    stdout.print(f"sources: {'; '.join(sources)}")
