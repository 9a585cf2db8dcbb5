"""Suite commands: build (render a query suite to audio), noise-sources, curate."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from voxeval import atomic_files
from voxeval.benchmarks.build import build_suite, profile_voices, speaker_profile
from voxeval.benchmarks.build_options import parse_build_options, parse_profile_label
from voxeval.benchmarks.mtalk.mtalk_build import DEFAULT_ENGINES, build_dialogue_suite
from voxeval.benchmarks.noise import NoiseLibrary
from voxeval.benchmarks.suite_info import resolve_suite
from voxeval.benchmarks.wildspeech.curate import CurationReport, write_curated
from voxeval.benchmarks.wildspeech.curate import curate as run_curation
from voxeval.benchmarks.wildspeech.wildspeech_loader import (
    import_wildspeech,
    write_wildspeech_suite,
)
from voxeval.cli.common import console, friendly_errors, print_json
from voxeval.cli.main import app
from voxeval.config import load_yaml
from voxeval.errors import ConfigError
from voxeval.protocols.input_intelligibility import (
    INTELLIGIBILITY_FILE,
    WER_LIMIT,
    check_built_suite,
)
from voxeval.providers.base import LLM
from voxeval.providers.factory import create_provider
from voxeval.providers.voices.engine_confounds import engine_confounds
from voxeval.providers.voices.voice_catalogue import NATURAL_ENGINES, naturalness
from voxeval.redaction import register_config_secrets

stdout = Console()


def _profiles(value: str) -> int | str | list[str]:
    if value == "all":
        return "all"
    if value.isdigit():
        return int(value)
    return [p.strip() for p in value.split(",") if p.strip()]


@app.command()
@friendly_errors
def build(
    suite: str = typer.Argument(..., help="built-in suite name, suite file or folder"),
    out: Path = typer.Option(..., "-o", "--out", help="output folder"),
    profiles: str = typer.Option(
        "4",
        help="N (first N of the balanced 16-profile grid), 'all', or labels (female-child-bright)",
    ),
    assign: str = typer.Option(
        "cross", help="cross: every query x profile; rotate: one profile per query"
    ),
    conditions: str = typer.Option(
        "clean,natural_noise,human_noise",
        help="comma-separated; also reverb (room, far field), playback (loudspeaker) and "
        "synthetic_voice (the profile spoken by espeak-ng/flite)",
    ),
    snr: float | None = typer.Option(None, "--snr", help="mix noise at this SNR (dB)"),
    noise_ratio: float | None = typer.Option(
        None, "--noise-ratio", help="noise amplitude vs speech 1.0 (default 0.5)"
    ),
    seed: int = typer.Option(0, help="seed for noise choices and offsets"),
    limit: int | None = typer.Option(None, help="only the first N queries"),
    engines: str | None = typer.Option(
        None,
        help="TTS engines voices may come from (default piper,kokoro: natural voices; "
        "espeak,flite are formant synthesizers; dialogue suites: piper,espeak)",
    ),
    noise_dir: list[Path] = typer.Option([], "--noise-dir", help="ESC-50/MUSAN/DEMAND folder"),
    generated_noise: str = typer.Option("fallback", help="fallback | mix | only"),
    sampled_tts: bool = typer.Option(
        False, "--sampled-tts", help="keep Piper's sampling noise (more natural; drawn from --seed)"
    ),
    voice_choice: str = typer.Option(
        "balanced", help="balanced (no profile dimension confounded with the engine) | closest"
    ),
    room: str | None = typer.Option(
        None, help="room of the reverb condition (car, small_office, living_room, ...)"
    ),
    rt60: float | None = typer.Option(None, "--rt60", help="reverb: RT60 in seconds"),
    distance: float | None = typer.Option(
        None, "--distance", help="reverb: talker-microphone distance in metres"
    ),
    device: str | None = typer.Option(
        None, help="loudspeaker of the playback condition (phone, laptop, smart_speaker)"
    ),
    playback_room: str | None = typer.Option(
        None, help="room the playback is recaptured in ('none': no room)"
    ),
    check: bool = typer.Option(
        True,
        "--check/--no-check",
        help="transcribe the clean queries with Whisper base and warn about hard-to-hear voices",
    ),
    wer_limit: float = typer.Option(
        WER_LIMIT, "--wer-limit", help="warn when a profile's clean corpus WER is above this"
    ),
    as_json: bool = typer.Option(False, "--json", help="print the build summary as JSON"),
) -> None:
    """Render a suite over speaker profiles and noise conditions into OUT (cached, resumable).

    Then, unless --no-check, Whisper base transcribes every clean query: the corpus WER and
    DNSMOS of each profile go to OUT/intelligibility.json, with a warning for each profile
    whose clean queries are misheard above --wer-limit.

    A dialogue suite (protocol multi_turn, e.g. mtalk-mini) is rendered turn by turn with its
    tags turned into sound; profiles, conditions and noise options do not apply to it."""
    engine_names = [e.strip() for e in (engines or "").split(",") if e.strip()]
    if resolve_suite(suite).protocol == "multi_turn":
        _build_dialogues(suite, out, seed, limit, tuple(engine_names or DEFAULT_ENGINES), as_json)
        return
    given = {"room": room, "rt60_s": rt60, "distance_m": distance, "device": device}
    acoustics: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
    if playback_room is not None:
        acoustics["playback_room"] = None if playback_room == "none" else playback_room
    options = parse_build_options(
        {
            **acoustics,
            "profiles": _profiles(profiles),
            "assign": assign,
            "conditions": [c.strip() for c in conditions.split(",") if c.strip()],
            "snr_db": snr,
            "noise_ratio": noise_ratio,
            "seed": seed,
            "limit": limit,
            "engines": engine_names or list(NATURAL_ENGINES),
            "noise_dirs": [str(d) for d in noise_dir],
            "generated_noise": generated_noise,
            "deterministic_tts": not sampled_tts,
            "voice_choice": voice_choice,
        },
        where="voxeval build",
    )
    built = build_suite(suite, out, options)
    summary: dict[str, Any] = {
        "suite": built.name,
        "out_dir": str(built.out_dir),
        "items": len(built.items),
        "rendered": built.rendered,
        "cached": built.cached,
        "manifest": str(built.out_dir / "manifest.jsonl"),
    }
    checked = check_built_suite(built.items, wer_limit=wer_limit, seed=seed) if check else None
    if checked is not None:
        atomic_files.write_json_atomic(built.out_dir / INTELLIGIBILITY_FILE, checked)
        summary["intelligibility"] = checked
    if as_json:
        print_json(summary)
        return
    console.print(
        f"built [bold]{built.name}[/]: {len(built.items)} items "
        f"({built.rendered} rendered, {built.cached} reused) -> {summary['manifest']}"
    )
    if checked is not None:
        _print_check(checked)


def _print_check(checked: dict[str, Any]) -> None:
    """The clean-query intelligibility table of a build, and a warning per profile over."""
    if "not_run" in checked:
        console.print(f"[yellow]intelligibility not checked:[/] {checked['not_run']}")
        return
    table = Table(title=f"clean queries heard by {checked['asr']}")
    for column in ("profile", "corpus WER", "DNSMOS OVRL", "n"):
        table.add_column(column)
    rows = [("all", checked["overall"]), *checked["by_profile"].items()]
    for profile, stat in rows:
        ovrl = stat.get("dnsmos_ovrl") or {}
        mos = f"{ovrl['mean']:.2f}" if ovrl.get("mean") is not None else "-"
        table.add_row(profile, f"{stat['corpus_wer']:.1%}", mos, str(stat["n"]))
    console.print(table)
    for profile in checked["over_limit"]:
        wer = checked["by_profile"][profile]["corpus_wer"]
        console.print(
            f"[yellow]warning:[/] profile {profile}: clean corpus WER {wer:.1%} is above the "
            f"{checked['wer_limit']:.0%} limit; systems may fail to hear these queries"
        )


def _build_dialogues(
    suite: str, out: Path, seed: int, limit: int | None, engines: tuple[str, ...], as_json: bool
) -> None:
    built = build_dialogue_suite(suite, out, seed=seed, limit=limit, engines=engines)
    summary: dict[str, Any] = {
        "suite": built.name,
        "out_dir": str(built.out_dir),
        "dialogues": len(built.entries),
        "turns": sum(len(e["turns"]) for e in built.entries),
        "rendered": built.rendered,
        "cached": built.cached,
        "suite_file": str(built.suite_file),
        "manifest": str(built.out_dir / "manifest.jsonl"),
    }
    if as_json:
        print_json(summary)
        return
    console.print(
        f"built [bold]{built.name}[/]: {summary['dialogues']} dialogues, {summary['turns']} "
        f"turns ({built.rendered} rendered, {built.cached} reused) -> {summary['suite_file']}"
    )


@app.command("noise-sources")
@friendly_errors
def noise_sources(
    noise_dir: list[Path] = typer.Option([], "--noise-dir", help="ESC-50/MUSAN/DEMAND folder"),
    generated_noise: str = typer.Option("fallback", help="fallback | mix | only"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Which background-noise sources each category would draw from here."""
    if generated_noise not in ("fallback", "mix", "only"):
        raise ConfigError("--generated-noise must be fallback, mix or only")
    library = NoiseLibrary([str(d) for d in noise_dir], generated=generated_noise)  # type: ignore[arg-type]
    info = library.describe()
    if as_json:
        print_json(info)
        return
    table = Table(title="noise categories")
    for column in ("category", "ratio", "recordings", "from", "generated in use"):
        table.add_column(column)
    for name, row in info["categories"].items():
        table.add_row(
            name,
            f"{row['ratio']:.2f}",
            str(row["recorded"]),
            ", ".join(row["recorded_origins"]) or "-",
            ", ".join(row["generated"]) or "-",
        )
    stdout.print(table)
    stdout.print(f"babble speech clips: {info['babble_speech_clips']}")
    for note in info["notes"]:
        console.print(f"[yellow]note:[/] {note}")


@friendly_errors
def wildspeech_suite(  # `voxeval import wildspeech` (commands_import)
    data: Path = typer.Argument(..., help="WildSpeech-Bench parquet/JSONL file or folder"),
    out: Path = typer.Option(..., "-o", "--out", help="suite.yaml path or folder"),
    name: str = typer.Option("wildspeech", help="suite name"),
) -> None:
    """Write a suite file that runs a downloaded WildSpeech-Bench release unchanged."""
    imported = import_wildspeech(data)  # before writing: a failed import leaves no suite file
    path = write_wildspeech_suite(data, out, name)
    console.print(imported.summary())
    console.print(f"wrote {path} ({len(imported.queries)} queries)")


def _raters(config: Path | None) -> list[LLM]:
    """LLMs from a judge config: ``{provider: ...}``, ``{judge: {...}}`` or ``{raters: [..]}``."""
    if config is None:
        return []
    data = load_yaml(config)
    if not isinstance(data, dict):
        raise ConfigError(f"{config}: expected a mapping")
    if isinstance(data.get("raters"), list):
        specs = data["raters"]
    elif isinstance(data.get("judge"), dict):
        specs = [data["judge"]]
    elif "provider" in data:
        specs = [data]
    else:
        raise ConfigError(f"{config}: needs 'provider', 'judge: {{...}}' or 'raters: [...]'")
    if not 1 <= len(specs) <= 2:
        raise ConfigError(f"{config}: raters: give one or two endpoints")
    register_config_secrets(specs)  # keys the judges could echo are redacted from output
    return [create_provider("llm", spec) for spec in specs]


@app.command()
@friendly_errors
def curate(
    source: Path = typer.Argument(..., help="JSONL of real user queries"),
    out: Path = typer.Option(..., "-o", "--out", help="curated JSONL"),
    judge_config: Path | None = typer.Option(
        None, "--judge-config", help="YAML naming one or two LLM endpoints for the raters"
    ),
    per_category: int | None = typer.Option(None, help="cap per category (rebalancing)"),
    seed: int = typer.Option(0, help="seed for rebalancing"),
    as_json: bool = typer.Option(False, "--json", help="print the step counts as JSON"),
) -> None:
    """Filter, rate, label and rebalance real user queries; reports counts at every step.
    Exit 1 when rater calls failed (each listed), 3 when the raters could not be reached
    (nothing is written then)."""
    report = run_curation(source, _raters(judge_config), per_category=per_category, seed=seed)
    path = None if report.unreachable else write_curated(report, out)
    summary = {
        "out": str(path) if path else None,
        "kept": len(report.kept),
        "language_detector": report.language_detector,
        "llm_calls": report.llm_calls,
        "llm_failures": report.llm_failures,
        "failed_calls": [
            {"step": step, "query": query, "error": error}
            for step, query, error in report.failed_calls
        ],
        "unreachable": report.unreachable,
        "steps": report.table(),
    }
    if as_json:
        print_json(summary)
    else:
        table = Table(title=f"curation of {source.name}")
        for column in ("step", "kept", "dropped", "note"):
            table.add_column(column)
        for step in report.table():
            note = step["note"] if step["ran"] else f"not run: {step['note']}"
            table.add_row(step["step"], str(step["kept"]), str(step["dropped"]), note)
        stdout.print(table)
        if path is not None:
            console.print(f"wrote {len(report.kept)} queries to {path}")
    _curation_failures(report)


def _curation_failures(report: CurationReport) -> None:
    """Say which rater calls failed, and exit 3 (unreachable) or 1 (some calls failed)."""
    if report.unreachable:
        console.print(
            f"[bold red]error:[/] the rater endpoint could not be reached: {report.unreachable}; "
            "nothing was written",
            highlight=False,
        )
        raise typer.Exit(3)
    if not report.failed_calls:
        return
    for step, query, error in report.failed_calls[:10]:
        console.print(f"[yellow]call failed[/] {step}, query {query}: {error}", highlight=False)
    if len(report.failed_calls) > 10:
        console.print(f"... and {len(report.failed_calls) - 10} more (see --json)")
    console.print(
        f"[red]{len(report.failed_calls)} rater calls failed[/]: those queries were not judged "
        "and are not in the output; run the command again to retry them",
        highlight=False,
    )
    raise typer.Exit(1)


@app.command()
@friendly_errors
def profiles(
    profiles: str = typer.Option("4", help="N, 'all', or labels, as for `voxeval build`"),
    engines: str = typer.Option(",".join(NATURAL_ENGINES), help="TTS engines voices may come from"),
    voice_choice: str = typer.Option("balanced", help="balanced | closest"),
    as_json: bool = typer.Option(False, "--json", help="print the profiles as JSON"),
) -> None:
    """List the speaker profiles a build renders: engine, voice, native or transform, and the
    profile dimensions confounded with the engine."""
    options = parse_build_options(
        {
            "profiles": _profiles(profiles),
            "engines": [e.strip() for e in engines.split(",") if e.strip()],
            "voice_choice": voice_choice,
        },
        where="voxeval profiles",
    )
    rows = []
    for label, choice in profile_voices(options):
        natural, note = naturalness(speaker_profile(parse_profile_label(label)), choice.voice)
        rows.append(
            {
                "profile": label,
                "engine": choice.voice.engine,
                "voice": choice.voice.name,
                "source": "native" if choice.transform.is_identity else "transform",
                "natural": natural,
                "transform": choice.transform.describe(),
                "distance": choice.distance,
                "note": note,
            }
        )
    fields = [parse_profile_label(str(r["profile"])).model_dump(exclude_none=True) for r in rows]
    confounded = engine_confounds(
        [(f, str(r["engine"])) for f, r in zip(fields, rows, strict=True)]
    )
    if as_json:
        print_json({"profiles": rows, "confounded": confounded})
        return
    table = Table(title=f"{len(rows)} speaker profiles ({options.voice_choice} voices)")
    for column in ("profile", "engine", "voice", "source", "natural", "transform", "distance"):
        table.add_column(column)
    for row in rows:
        table.add_row(
            *(str(row[c]) for c in ("profile", "engine", "voice", "source", "natural")),
            str(row["transform"]),
            f"{row['distance']:.3f}",
        )
    stdout.print(table)
    for row in rows:
        if row["note"]:
            stdout.print(f"[yellow]note:[/] {row['note']}")
    for entry in confounded.values():
        stdout.print(f"[yellow]warning:[/] {entry['note']}")
