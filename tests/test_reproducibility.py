"""Same config + same seed = the same bytes.

Each test runs a tiny suite twice, each time with a fresh output folder and a fresh provider
cache, and compares the sha256 of every artifact. Only fields that hold measured wall-clock
time or the identity of the run itself are left out of the comparison (``VOLATILE``); the
test checks those fields exist, so a renamed field cannot silently escape the comparison.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse
from tests.simulation.helpers import scenario, write_suite
from voxeval.audio import Audio, audio_to_wav_bytes, read_audio
from voxeval.cli.main import app
from voxeval.config import ProviderSpec
from voxeval.providers.factory import availability

# file name -> top-level fields that are measured wall-clock time or name/date the run.
VOLATILE: dict[str, set[str]] = {
    "summary.json": {"run_id", "generated_at"},
    "reply.json": {"timing"},
    "call.json": {"wall_s", "compute_s"},  # wall-clock measurements of this machine
}
# Files that are the run's own bookkeeping (timestamps, attempt counts), not results.
BOOKKEEPING = {"run.yaml", "index.sqlite", "index.sqlite-wal", "index.sqlite-shm"}


def _needs(kind: str, provider: str) -> None:
    found = availability(kind, ProviderSpec(provider=provider))
    if not found.available:
        pytest.skip(f"{kind} {provider}: {found.reason}")


# Measured, not results: reply latencies are wall times; usage and costs count the provider
# calls that were really made, and which of two concurrent units renders a shared phrase
# first (a cache miss) and which reads it back (a free hit) depends on thread timing.
_MEASURED_KEYS = {"latency", "usage", "costs"}


def _drop_latency(data: object) -> object:
    """Drop the measured fields (``_MEASURED_KEYS``) at every depth."""
    if isinstance(data, dict):
        return {k: _drop_latency(v) for k, v in data.items() if k not in _MEASURED_KEYS}
    if isinstance(data, list):
        return [_drop_latency(v) for v in data]
    return data


_LATENCY_SECTION = re.compile(
    r"(?ms)^(#+ |<h\d>)[^\n]*(Latency|[Uu]sage|Costs).*?(?=^#+ |^<h\d>|\Z)"
)


def _stable_json(path: Path, text: str) -> str:
    data = json.loads(text)
    if path.name == "summary.json":
        data = _drop_latency(data)
    dropped = VOLATILE.get(path.name, set())
    if dropped and isinstance(data, dict):
        missing = dropped - set(data)
        assert not missing, f"{path}: expected measured fields {sorted(missing)} are gone"
        data = {k: v for k, v in data.items() if k not in dropped}
    return json.dumps(data, sort_keys=True)


def artifact_digests(run_dir: Path) -> dict[str, str]:
    """sha256 of every artifact below ``run_dir`` by relative path, measured fields removed.
    The report pages quote the run id and generation time: those two values are masked."""
    summary = json.loads((run_dir / "report" / "summary.json").read_text(encoding="utf-8"))
    digests: dict[str, str] = {}
    for path in sorted(p for p in run_dir.rglob("*") if p.is_file()):
        if path.name in BOOKKEEPING or path.name.startswith("."):
            continue
        if path.name == "costs.json":
            continue  # priced from usage (see _MEASURED_KEYS)
        if path.parent.name == "figures" and path.name.startswith("latency-"):
            continue  # drawn from the measured reply latencies, like the Latency sections
        if path.suffix in (".md", ".html"):
            text = path.read_text(encoding="utf-8")
            for field in VOLATILE["summary.json"]:
                text = text.replace(str(summary[field]), f"<{field}>")
            text = _LATENCY_SECTION.sub("", text)
            content = text.encode()
        elif path.suffix == ".json":
            content = _stable_json(path, path.read_text(encoding="utf-8")).encode()
        elif path.suffix == ".jsonl":
            lines = path.read_text(encoding="utf-8").splitlines()
            content = "\n".join(_stable_json(path, line) for line in lines if line).encode()
        else:
            content = path.read_bytes()
        digests[str(path.relative_to(run_dir))] = hashlib.sha256(content).hexdigest()
    return digests


def assert_same_artifacts(first: Path, second: Path, expected: tuple[str, ...]) -> None:
    a, b = artifact_digests(first), artifact_digests(second)
    assert sorted(a) == sorted(b), "the two runs wrote different files"
    for name in expected:  # the comparison covers the artifacts that matter
        assert any(Path(p).name == name for p in a), f"no {name} in {first}"
    differing = sorted(p for p in a if a[p] != b[p])
    assert not differing, f"{len(differing)} of {len(a)} artifacts differ: {differing[:10]}"


def run_once(config: Path, tmp_path: Path, name: str, cache: str) -> Path:
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    data["cache_dir"] = str(tmp_path / cache)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    out = tmp_path / name
    result = CliRunner().invoke(app, ["run", str(path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


def run_twice(config: Path, tmp_path: Path) -> tuple[Path, Path]:
    """Two runs, each with its own fresh output folder and provider cache."""
    first = run_once(config, tmp_path, "run1", "cache1")
    return first, run_once(config, tmp_path, "run2", "cache2")


# ---------------------------------------------------------------------------- single turn

# One query: every rendered item costs two TTS voices, the input check's Whisper and DNSMOS
# and the scoring models in each of three runs; the profiles and conditions multiply it.
QUERIES = [
    {"id": "q1", "text": "How long should I boil an egg for a soft yolk?", "category": "SR",
     "assertions": [{"kind": "number", "values": ["6"], "tolerance": 2}]},
]  # fmt: skip


def _fixed_reply() -> bytes:
    """The system's fixed spoken answer (espeak-ng is deterministic)."""
    from voxeval.providers.tts.tts_espeak import EspeakTTS

    tts = EspeakTTS()
    return audio_to_wav_bytes(_padded(tts.synthesize("Boil it for about six minutes.")))


# The `mos` metric (DNSMOS) repeats a reply shorter than its 9.01 s window by doubling and then
# scores every 1 s hop: q1's 2.16 s reply became 17.3 s, 9 windows of the same speech, in every
# unit of both fresh runs. Trailing silence up to 2.3 s makes it 9.2 s, one window.
REPLY_SECONDS = 2.3


def _padded(speech: Audio) -> Audio:
    missing = round(REPLY_SECONDS * speech.rate) - speech.samples.size
    if missing <= 0:
        return speech
    silence = np.zeros(missing, dtype=np.float32)
    return Audio(np.concatenate([speech.samples, silence]), speech.rate, speech.source)


@pytest.fixture
def reply_server() -> Iterator[str]:
    wav = base64.b64encode(_fixed_reply()).decode()

    def answer(path: str, body: Any) -> FakeResponse:
        assert b"q1__" in body  # the one query
        return FakeResponse(json_body={"audio": wav, "text": None})

    with FakeOpenAIServer(answer) as server:
        yield server.url


def single_turn_config(tmp_path: Path, url: str, seed: int = 0) -> Path:
    suite = tmp_path / "suite"
    suite.mkdir(parents=True, exist_ok=True)
    (suite / "suite.yaml").write_text(
        yaml.safe_dump({"name": "tiny", "protocol": "single_turn", "queries": QUERIES})
    )
    config = {
        "suite": str(suite),
        "systems": [{"name": "fixed", "type": "http", "url": url + "/reply"}],
        "metrics": ["assertions", "mos", "wer", "duration", "speaking_rate", "language"],
        # Piper's sampled noise kept on: the seeded draw must reproduce.
        "build": {
            "profiles": ["male-adult-dark", "female-adult-dark"],  # Piper and Kokoro
            "voice_choice": "closest",  # the nearest native voices: Piper is one of them
            "conditions": ["clean", "natural_noise"],
            "deterministic_tts": False,
        },
        "scoring": {"k": 2},
        "seed": seed,
        "concurrency": 2,
    }
    path = tmp_path / "single.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


@pytest.mark.models
@pytest.mark.slow
def test_single_turn_run_is_byte_identical_with_fresh_caches(tmp_path, reply_server) -> None:
    for kind, name in (("tts", "piper"), ("tts", "espeak"), ("asr", "whisper-tiny-en")):
        _needs(kind, name)
    first, second = run_twice(single_turn_config(tmp_path, reply_server), tmp_path)
    voices = {
        json.loads(line)["voice"]
        for line in (first / "suite_audio" / "manifest.jsonl").read_text().splitlines()
    }
    assert "piper:joe" in voices and len(voices) == 2  # the seeded Piper path is exercised
    transcripts = json.loads(next(first.rglob("transcripts.json")).read_text())
    assert any(c["seed"] is not None for c in transcripts["candidates"])  # sampled decodes
    assert_same_artifacts(
        first,
        second,
        ("user.wav", "assistant.wav", "transcripts.json", "scores.json", "summary.json"),
    )
    rendered = [p for p in artifact_digests(first) if p.startswith("suite_audio/audio/")]
    assert len(rendered) == 1 * 2 * 2  # queries x profiles x conditions, all compared
    # A run answered from the first run's (now warm) cache gives the same bytes too.
    warm = run_once(single_turn_config(tmp_path, reply_server), tmp_path, "run3", "cache1")
    assert_same_artifacts(first, warm, ("user.wav", "transcripts.json", "summary.json"))


def test_a_different_seed_changes_the_rendered_noise(tmp_path) -> None:
    from voxeval.benchmarks.build import build_suite

    _needs("tts", "espeak")
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        yaml.safe_dump({"name": "one", "protocol": "single_turn", "queries": QUERIES[:1]})
    )
    options = {
        "profiles": ["male-adult-dark"],
        "conditions": ["clean", "natural_noise"],
        "engines": ["espeak"],
        "generated_noise": "only",
    }
    built: dict[int, dict[str, np.ndarray]] = {}
    for seed in (0, 1):
        items = build_suite(suite, tmp_path / f"b{seed}", options, seed=seed, progress=False).items
        built[seed] = {i.condition: read_audio(i.audio_path).samples for i in items}
    assert np.array_equal(built[0]["clean"], built[1]["clean"])  # speech does not use the seed
    assert not np.array_equal(built[0]["natural_noise"], built[1]["natural_noise"])


# ---------------------------------------------------------------------------- live calls


def live_call_config(tmp_path: Path) -> Path:
    suite = write_suite(tmp_path / "suite", [scenario("book-1")])
    config = {
        "suite": str(suite),
        "systems": [{"name": "reference", "type": "scripted"}],
        "seed": 4,
        "simulation": {
            "caller": "scripted",
            "mode": "audio",
            "caller_voice": "piper:joe",
            "agent_voice": "espeak:en-gb+f3",
            "caller_asr": {"provider": "whisper-tiny-en"},
            "latency_model": {
                "agent": {"kind": "normal", "mean_ms": 800, "sd_ms": 150},
                "caller": {"kind": "fixed", "ms": 300},
                "tool": {"kind": "fixed", "ms": 200},
            },
        },
        "perturbations": [{"name": "noise", "environment": "coffee_shop", "snr_db": 15}],
        "concurrency": 2,
    }
    path = tmp_path / "live.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


@pytest.mark.models
@pytest.mark.slow
def test_live_call_run_is_byte_identical_with_fresh_caches(tmp_path) -> None:
    for kind, name in (("tts", "piper"), ("tts", "espeak"), ("asr", "whisper-tiny-en")):
        _needs(kind, name)
    first, second = run_twice(live_call_config(tmp_path), tmp_path)
    assert len(list(first.rglob("call.json"))) == 2  # clean + coffee shop
    assert_same_artifacts(
        first,
        second,
        ("user.wav", "assistant.wav", "mixed.wav", "events.jsonl", "scores.json", "summary.json"),
    )


# ---------------------------------------------------------------------------- components


def test_espeak_and_flite_are_deterministic() -> None:
    from voxeval.providers.tts.tts_espeak import ESPEAK_VARIANTS, EspeakTTS
    from voxeval.providers.tts.tts_flite import FLITE_VOICES, FliteTTS

    _needs("tts", "espeak")
    _needs("tts", "flite")
    text = "Quick test, seven thirty on Friday?"
    espeak, flite = EspeakTTS(), FliteTTS()
    voices = [(espeak, f"en-gb-scotland+{v}") for v in ESPEAK_VARIANTS]
    voices += [(flite, v) for v in FLITE_VOICES]
    for engine, voice in voices:
        first = engine.synthesize(text, voice=voice).samples
        assert np.array_equal(first, engine.synthesize(text, voice=voice).samples), voice


def test_speaker_transforms_are_deterministic() -> None:
    from voxeval.audio import Audio
    from voxeval.providers.voices.speaker_transform import SpeakerTransform

    t = np.arange(16000) / 16000
    voice = Audio(
        (0.3 * np.sin(2 * np.pi * 140 * t) * (1 + np.sin(7 * t))).astype(np.float32), 16000
    )
    transform = SpeakerTransform(pitch_semitones=3.5, formant_ratio=1.12, tempo=0.9)
    assert np.array_equal(transform.apply(voice).samples, transform.apply(voice).samples)


@pytest.mark.models
def test_piper_cache_entries_are_keyed_by_seed(tmp_path) -> None:
    """A cached Piper rendering made with one seed is never served for another seed."""
    from voxeval.providers.caching.cache import ProviderCache, cached
    from voxeval.providers.tts.tts_piper import PiperTTS

    _needs("tts", "piper")
    cache = ProviderCache(tmp_path)
    text = "The seed is part of the key."
    seed0 = cached("tts", PiperTTS(seed=0), cache)
    first = seed0.synthesize(text)
    again = cached("tts", PiperTTS(seed=0), cache).synthesize(text)
    seed1 = cached("tts", PiperTTS(seed=1), cache)
    other = seed1.synthesize(text)
    assert seed1.cache_stats()["misses"] == 1 and seed1.cache_stats()["hits"] == 0
    assert np.array_equal(first.samples, again.samples)
    assert np.array_equal(other.samples, PiperTTS(seed=1).synthesize(text).samples)
    assert first.samples.shape != other.samples.shape or not np.array_equal(
        first.samples, other.samples
    )
