"""The noise library: natural-noise categories with the protocol's sampling ratios, and babble.

``NoiseLibrary`` gathers sources from installed packages, user folders (see
``noise_sources``) and the synthetic textures of ``voxeval.audio.sound_textures``.
Recordings are preferred; a category with no recording falls back to its generated textures
(``generated="fallback"``), or both are drawn from (``"mix"``), or only generated sounds are
used (``"only"``, fully reproducible across machines). Every draw is a pure function of its seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from voxeval.audio import Audio, babble, concatenate, normalise_peak, read_audio, resample
from voxeval.audio.sound_textures import SOUND_TEXTURES, render_texture
from voxeval.benchmarks.noise_sources import (
    NOISE_CATEGORIES,
    NoiseSource,
    ScanResult,
    scan_system_packages,
    scan_user_dir,
)
from voxeval.errors import ConfigError
from voxeval.json_types import JSONObject

GeneratedPolicy = Literal["fallback", "mix", "only"]
SHORT_EVENT_S = 1.0  # clips shorter than this become a sequence of events with gaps
BABBLE_TALKERS = 3


@dataclass(frozen=True)
class NoiseClip:
    """A drawn noise signal and where it came from."""

    audio: Audio
    category: str
    source: NoiseSource
    seed: int
    parts: tuple[str, ...] = ()  # babble: the clips that were mixed

    def describe(self) -> JSONObject:
        info: JSONObject = {
            "category": self.category,
            "seed": self.seed,
            **self.source.describe(),
        }
        if self.parts:
            info["parts"] = list(self.parts)
        return info


def _rng(seed: int, *salt: int) -> np.random.Generator:
    return np.random.default_rng([seed, *salt])


class NoiseLibrary:
    def __init__(
        self,
        user_dirs: Sequence[str | Path] = (),
        *,
        system_sounds: bool = True,
        generated: GeneratedPolicy = "fallback",
        rate: int = 16000,
        duration_s: float = 8.0,
    ) -> None:
        if generated not in ("fallback", "mix", "only"):
            raise ConfigError(f"noise: generated must be fallback, mix or only, not {generated!r}")
        self.rate = rate
        self.duration_s = duration_s
        self.generated = generated
        self.scan = ScanResult()
        scans = [scan_system_packages()] if system_sounds else []
        scans += [scan_user_dir(Path(d)) for d in user_dirs]
        for found in scans:
            self.scan.sources.extend(found.sources)
            self.scan.speech.extend(found.speech)
            self.scan.unmapped.extend(found.unmapped)
            self.scan.notes.extend(found.notes)
        self._cache: dict[Path, Audio] = {}

    # ------------------------------------------------------------------ sources
    def sources(self, category: str) -> list[NoiseSource]:
        if category not in NOISE_CATEGORIES:
            raise ConfigError(
                f"noise: unknown category {category!r}; known: {list(NOISE_CATEGORIES)}"
            )
        recorded = [s for s in self.scan.sources if s.category == category]
        synthetic = [
            NoiseSource(category, name, "generated", generator=name)
            for name, (cat, _) in SOUND_TEXTURES.items()
            if cat == category
        ]
        if self.generated == "only":
            return synthetic
        if self.generated == "mix":
            return recorded + synthetic
        return recorded or synthetic

    def pick_category(self, seed: int) -> str:
        """A category drawn with the protocol's sampling ratios."""
        names = list(NOISE_CATEGORIES)
        weights = np.array([NOISE_CATEGORIES[n] for n in names])
        return names[int(_rng(seed, 1).choice(len(names), p=weights / weights.sum()))]

    # ------------------------------------------------------------------ drawing
    def sample(self, category: str, seed: int) -> Audio:
        """A noise signal of ``category`` (about ``duration_s`` long), chosen by ``seed``."""
        return self.sample_clip(category, seed).audio

    def sample_clip(self, category: str, seed: int) -> NoiseClip:
        options = self.sources(category)
        if not options:
            raise ConfigError(f"noise: no source for category {category!r}")
        rng = _rng(seed, 2)
        source = options[int(rng.integers(len(options)))]
        return NoiseClip(self._render(source, rng), category, source, seed)

    def sample_natural(self, seed: int) -> NoiseClip:
        """Category by the sampling ratios, then a source within it."""
        return self.sample_clip(self.pick_category(seed), seed)

    def forget_clips(self) -> None:
        """Drop the decoded noise files (read again when next needed)."""
        self._cache.clear()

    def _load(self, path: Path) -> Audio:
        if path not in self._cache:
            self._cache[path] = resample(read_audio(path, channels="mix"), self.rate)
        return self._cache[path]

    def _render(self, source: NoiseSource, rng: np.random.Generator) -> Audio:
        if source.generator == "typing" and source.path is not None:
            clicks = [self._load(p) for p in sorted(source.path.glob("*.wav"))]
            return self._events(clicks, rng, gap=(0.06, 0.3))
        if source.generator is not None:
            return render_texture(
                source.generator, int(rng.integers(2**31)), self.duration_s, self.rate
            )
        assert source.path is not None
        audio = self._load(source.path)
        if audio.duration < SHORT_EVENT_S:
            return self._events([audio], rng, gap=(0.4, 1.5))
        return audio

    def _events(
        self, clips: list[Audio], rng: np.random.Generator, gap: tuple[float, float]
    ) -> Audio:
        """Short sounds repeated at random intervals up to ``duration_s``."""
        parts: list[Audio] = [Audio.silence(float(rng.uniform(0.0, gap[1])), self.rate)]
        total = parts[0].duration
        while total < self.duration_s:
            clip = clips[int(rng.integers(len(clips)))]
            pause = Audio.silence(float(rng.uniform(*gap)), self.rate)
            parts += [clip, pause]
            total += clip.duration + pause.duration
        return concatenate(parts).slice(0.0, self.duration_s)

    def babble(
        self,
        seed: int,
        duration_s: float,
        extra_speech: Sequence[Audio] = (),
        n: int = BABBLE_TALKERS,
    ) -> NoiseClip:
        """Background talk: ``n`` talkers, each a run of random speech clips, mixed.

        Real recordings are used when installed; ``extra_speech`` (e.g. TTS clips of other
        voices) is used otherwise.
        """
        rng = _rng(seed, 3)
        pool: list[Audio | Path] = list(self.scan.speech) or list(extra_speech)
        origin = "recorded speech" if self.scan.speech else "tts voices"
        if len(pool) < n:
            raise ConfigError(
                f"noise: babble needs at least {n} speech clips, found {len(pool)} "
                "(install asterisk-core-sounds-en-wav, give a MUSAN folder, or TTS clips)"
            )
        talkers: list[Audio] = []
        used: list[str] = []
        for _ in range(n):
            pieces: list[Audio] = []
            while sum(p.duration for p in pieces) < duration_s:
                item = pool[int(rng.integers(len(pool)))]
                clip = self._load(item) if isinstance(item, Path) else resample(item, self.rate)
                pieces.append(clip)
                used.append(clip.source)
            talkers.append(concatenate(pieces, silence_s=float(rng.uniform(0.05, 0.3))))
        mixed = babble(talkers, n=n, seed=rng, duration_s=duration_s, rate=self.rate)
        source = NoiseSource("human_noise", f"babble of {n} talkers", origin)
        return NoiseClip(normalise_peak(mixed, -3.0), "human_noise", source, seed, tuple(used))

    # ------------------------------------------------------------------ reporting
    def describe(self) -> dict[str, Any]:
        """Per category: recorded and generated sources, and what is missing."""
        categories: dict[str, Any] = {}
        for category, ratio in NOISE_CATEGORIES.items():
            recorded = [s for s in self.scan.sources if s.category == category]
            origins = sorted({s.origin for s in recorded})
            used = self.sources(category)
            categories[category] = {
                "ratio": ratio,
                "recorded": len(recorded),
                "recorded_origins": origins,
                "generated": sorted(s.label for s in used if s.origin == "generated"),
                "in_use": len(used),
                "missing_recordings": not recorded,
            }
        return {
            "categories": categories,
            "babble_speech_clips": len(self.scan.speech),
            "unmapped_files": len(self.scan.unmapped),
            "generated_policy": self.generated,
            "notes": list(self.scan.notes),
        }
