"""Speech-stack commands: doctor, voices, synth, transcribe, mos."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import asdict
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from voxeval.audio import read_audio, write_audio
from voxeval.cli.common import console, friendly_errors, print_json
from voxeval.cli.main import app
from voxeval.config import ProviderSpec
from voxeval.errors import ConfigError
from voxeval.providers.factory import PROVIDER_KINDS, availability, create_provider
from voxeval.providers.voices.voice_catalogue import (
    SpeakerProfile,
    rank_voices,
    render_speech,
    select_voice,
    voice_catalogue,
    voice_quality,
)
from voxeval.registry import items

# Optional Debian packages: what each one adds.
DEBIAN_PACKAGES = {
    "espeak-ng": "espeak TTS voices (8 English accents, 2 Spanish)",
    "flite": "flite TTS voices (slt, rms, awb, kal16)",
    "sox": "extra audio conversions",
    "asterisk-core-sounds-en-wav": "real human speech prompts (ASR checks, babble noise)",
    "sound-theme-freedesktop": "phone ring, alarm, bell sound events",
    "bucklespring-data": "keyboard click sound events",
}

# Optional extras of voxeval's own (pyproject [project.optional-dependencies]) that open a way
# to call agents as deployed: extra -> (distribution checked, what it adds).
CALL_EXTRAS = {
    "mcp": (
        "mcp",
        "scenario tools served to external agents over MCP and HTTP (docs/mcp-tools.md)",
    ),
    "pipecat": (
        "pipecat-ai",
        "Pipecat pipelines (docs/pipecat.md) and its serializers (docs/phone-streams.md)",
    ),
    "webrtc": ("aiortc", "the webrtc system: dial agents that listen on WebRTC (docs/webrtc.md)"),
}

stdout = Console()  # tables are the command's output; messages go to stderr via ``console``


def provider_status() -> list[dict[str, Any]]:
    """Availability of every registered provider, with default options."""
    rows = []
    for kind in PROVIDER_KINDS:
        for name, _component in items(kind):
            try:
                avail = availability(kind, ProviderSpec(provider=name))
                available, reason = avail.available, avail.reason
            except Exception as exc:  # a broken provider must not hide the others
                available, reason = False, f"availability check failed: {exc}"
            rows.append({"kind": kind, "name": name, "available": available, "reason": reason})
    return rows


def debian_package_status() -> list[dict[str, Any]]:
    rows = []
    dpkg = shutil.which("dpkg-query")
    for package, purpose in DEBIAN_PACKAGES.items():
        if dpkg is None:
            installed: bool | None = None
        else:
            proc = subprocess.run(
                [dpkg, "-W", "-f=${Status}", package], capture_output=True, text=True, check=False
            )
            installed = proc.returncode == 0 and "install ok installed" in proc.stdout
        rows.append({"package": package, "installed": installed, "purpose": purpose})
    return rows


def extra_status() -> list[dict[str, Any]]:
    """Whether each optional call extra is installed, with its version."""
    from importlib.metadata import PackageNotFoundError, version

    rows = []
    for extra, (distribution, purpose) in CALL_EXTRAS.items():
        try:
            found: str | None = version(distribution)
        except PackageNotFoundError:
            found = None
        rows.append(
            {
                "extra": extra,
                "distribution": distribution,
                "installed": found is not None,
                "version": found,
                "purpose": purpose,
            }
        )
    return rows


@app.command()
@friendly_errors
def doctor(
    json_out: bool = typer.Option(False, "--json", help="Print a JSON list of providers."),
) -> None:
    """Show which providers (ASR, TTS, LLM, MOS, VAD) can run here, and why not."""
    rows = provider_status()
    if json_out:
        print_json(rows)
        return
    table = Table(title="voxeval providers")
    for col in ("kind", "name", "available", "reason"):
        table.add_column(col)
    for row in rows:
        mark = "[green]yes[/]" if row["available"] else "[red]no[/]"
        table.add_row(row["kind"], row["name"], mark, row["reason"])
    stdout.print(table)
    packages = Table(title="optional Debian packages")
    for col in ("package", "installed", "adds"):
        packages.add_column(col)
    for pkg in debian_package_status():
        state = {True: "[green]yes[/]", False: "[yellow]no[/]", None: "unknown (no dpkg)"}
        packages.add_row(pkg["package"], state[pkg["installed"]], pkg["purpose"])
    stdout.print(packages)
    extras = Table(title="optional extras (pip install 'voxeval[NAME]')")
    for col in ("extra", "installed", "adds"):
        extras.add_column(col)
    for row in extra_status():
        shown = f"[green]yes[/] ({row['version']})" if row["installed"] else "[yellow]no[/]"
        extras.add_row(row["extra"], shown, row["purpose"])
    stdout.print(extras)


@app.command()
@friendly_errors
def voices(
    json_out: bool = typer.Option(False, "--json", help="Print the catalogue as JSON."),
    profile: str | None = typer.Option(
        None, help="Rank voices for a speaker profile, e.g. 'female,senior,scottish'."
    ),
    top: int = typer.Option(5, help="With --profile: how many choices to show."),
) -> None:
    """List the voice catalogue (every voice of every TTS engine available here)."""
    if profile:
        wanted = SpeakerProfile.parse(profile)
        choices = rank_voices(wanted)[:top]
        if not choices:  # the reason (e.g. no voice speaks the profile's language)
            select_voice(wanted)
        data = [
            {
                "voice": c.voice.name,
                "transform": asdict(c.transform),
                "distance": c.distance,
                "explanation": c.explanation,
            }
            for c in choices
        ]
        if json_out:
            print_json(data)
        else:
            for row in data:
                stdout.print(f"{row['distance']:.3f}  {row['voice']}  {row['explanation']}")
        return
    catalogue = voice_catalogue()
    if json_out:
        print_json([asdict(v) for v in catalogue])
        return
    table = Table(title=f"{len(catalogue)} voices")
    for col in ("name", "language", "gender", "age", "accent", "timbre", "MOS"):
        table.add_column(col)
    for v in catalogue:
        mos = voice_quality(v)
        quality = "" if mos is None else f"{mos:.2f}"
        table.add_row(v.name, v.language, v.gender, v.age, v.accent, v.timbre, quality)
    stdout.print(table)


@app.command()
@friendly_errors
def synth(
    text: str = typer.Argument(..., help="Text to speak."),
    output: Path = typer.Option(..., "-o", "--output", help="WAV file to write."),
    voice: str = typer.Option(
        "piper:joe", help="Voice name 'engine:voice' (see `voxeval voices`)."
    ),
    profile: str | None = typer.Option(
        None, help="Speaker profile instead of a voice, e.g. 'female,senior,scottish,bright'."
    ),
) -> None:
    """Synthesize TEXT to a WAV file with a voice or the closest voice for a profile."""
    if profile:
        choice = select_voice(SpeakerProfile.parse(profile))
        console.print(
            f"voice {choice.voice.name}, distance {choice.distance:.3f}: {choice.explanation}"
        )
        audio = render_speech(text, choice)
    else:
        if ":" not in voice:  # an engine name alone means its default voice
            audio = create_provider("tts", voice).synthesize(text)
        else:
            audio = render_speech(text, voice)
    write_audio(audio, output)
    console.print(f"wrote {output} ({audio.duration:.2f} s at {audio.rate} Hz)")


@app.command()
@friendly_errors
def transcribe(
    file: Path = typer.Argument(..., help="Audio file (WAV/FLAC/MP3)."),
    asr: str = typer.Option("whisper-tiny-en", help="ASR provider name (see `voxeval doctor`)."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON with words and details."),
    beam: int = typer.Option(1, help="Beam size."),
    temperature: float = typer.Option(0.0, help="Sampling temperature (0 = greedy)."),
    seed: int | None = typer.Option(None, help="Seed for temperature sampling."),
    language: str = typer.Option("en", help="Spoken language code."),
    words: bool = typer.Option(True, help="Word timestamps."),
) -> None:
    """Transcribe an audio file."""
    if beam < 1:
        raise ConfigError(f"--beam must be >= 1, got {beam}")
    audio = read_audio(file, channels="mix")
    result = create_provider("asr", asr).transcribe(
        audio,
        language=language,
        beam_size=beam,
        temperature=temperature,
        word_timestamps=words,
        seed=seed,
    )
    if not json_out:
        typer.echo(result.text)
        return
    print_json(
        {
            "text": result.text,
            "language": result.language,
            "words": [asdict(w) for w in result.words],
            "provider": result.provider,
            "details": result.details,
        }
    )


@app.command()
@friendly_errors
def mos(
    file: Path = typer.Argument(..., help="Audio file to rate."),
    json_out: bool = typer.Option(False, "--json", help="Print the MOS fields as JSON."),
    model: str = typer.Option("dnsmos", help="MOS provider name (see `voxeval doctor`)."),
) -> None:
    """Predict speech quality (MOS, 1-5) of an audio file."""
    audio = read_audio(file, channels="mix")
    result = create_provider("mos", model).predict(audio)
    fields = {"model": result.model, "overall": result.overall, **result.scores}
    if json_out:
        print_json({**fields, "scores": result.scores})
        return
    for key, value in fields.items():
        typer.echo(f"{key}: {value:.3f}" if isinstance(value, float) else f"{key}: {value}")
