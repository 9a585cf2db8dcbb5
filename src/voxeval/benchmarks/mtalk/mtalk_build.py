"""Build a dialogue suite's user turns to audio (``voxeval build mtalk-mini -o DIR``).

Output folder::

    DIR/suite.yaml, dialogues.jsonl   the suite again, every turn's ``audio`` filled in: the
                                      folder is itself a dialogue suite (load_dialogue_suite)
    DIR/audio/<dialogue>/turn<N>.wav  24 kHz mono
    DIR/manifest.jsonl                one line per dialogue: voices, seed, params hash and, per
                                      turn, every placed piece with its start/end in seconds
    DIR/build.json                    options and counts

Each dialogue has a user voice (A) and a second voice of the other gender (B, for
interjections), picked from ``VOICE_POOL`` by (seed, dialogue id). Building is resumable:
a dialogue whose manifest line has the same parameter hash and whose audio files exist is not
rendered again. The same seed gives the same bytes.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from voxeval.audio import Audio, write_audio
from voxeval.benchmarks.build import DETERMINISTIC_ENGINE_OPTIONS
from voxeval.benchmarks.build_manifest import stable_seed, write_manifest
from voxeval.benchmarks.mtalk.dialogue import Dialogue, strip_tags, turn_item_id
from voxeval.benchmarks.mtalk.dialogue_suite import load_dialogue_suite, write_dialogue_suite
from voxeval.benchmarks.mtalk.mtalk_render import RATE, Speaker, TurnRenderer
from voxeval.benchmarks.mtalk.mtalk_tags import parse_turn
from voxeval.benchmarks.render_log import RenderSteps, read_render_log, render_each
from voxeval.errors import ConfigError, ProviderUnavailable
from voxeval.providers.base import TTS, Voice
from voxeval.providers.factory import create_provider
from voxeval.providers.provider_kinds import TTS_PROVIDERS
from voxeval.providers.voices.voice_catalogue import voice_catalogue

MTALK_RENDER_VERSION = 3  # bump when rendering changes so built dialogues are redone
MANIFEST = "manifest.jsonl"
DEFAULT_ENGINES = ("piper", "espeak")
# Distinct voices (engine, accent, variant), four male and four female; users and second
# speakers are drawn from these. The espeak voices are the variants Whisper tiny.en
# transcribed best (word error about 5-8 % on plain sentences, against 13 % and more).
VOICE_POOL = (
    "piper:joe",
    "espeak:en-gb+f1",
    "espeak:en-us+m7",
    "espeak:en-us+f2",
    "espeak:en-gb-x-gbclan+m6",
    "espeak:en-gb+f4",
    "espeak:en-us+m2",
    "espeak:en-gb-x-gbclan+f2",
)
# Babble talkers: other voices than the pool's.
BABBLE_VOICES = (
    "espeak:en-gb+f3",
    "espeak:en-us+f4",
    "espeak:en-gb-x-gbclan+m7",
    "espeak:en-gb-x-gbclan+m4",
)
# Engines whose own controls set tempo (and pitch) for delivery cues; see ``tuned_engine``.
TUNED_ENGINES = ("espeak", "piper")
ESPEAK_SPEED = 165
ESPEAK_PITCH_PER_SEMITONE = 6.5
BABBLE_LINES = (
    "Did anyone see where I put the receipt from this morning?",
    "I'll have the tomato soup and a pot of tea, thanks.",
    "We should leave soon, the roads get busy after five.",
    "She told me the meeting has moved to Thursday afternoon.",
)


@dataclass
class BuiltDialogues:
    out_dir: Path
    name: str
    suite_file: Path
    entries: list[dict[str, Any]] = field(default_factory=list)
    rendered: int = 0
    cached: int = 0


class DialogueBuilder:
    """Engines, voices and babble clips shared by the dialogues of one build."""

    def __init__(self, seed: int = 0, engines: tuple[str, ...] = DEFAULT_ENGINES) -> None:
        self.seed = seed
        catalogue = {v.name: v for v in voice_catalogue(engines)}
        self.pool: list[Voice] = [catalogue[n] for n in VOICE_POOL if n in catalogue]
        self.babble_voices = [catalogue[n] for n in BABBLE_VOICES if n in catalogue]
        genders = {v.gender for v in self.pool}
        if len(self.pool) < 2 or len(genders) < 2:
            raise ProviderUnavailable(
                f"building dialogues needs voices of both genders from {', '.join(engines)} "
                "(install voxeval[embedded] and espeak-ng)"
            )
        self._engines: dict[str, TTS] = {}
        self._identities: dict[str, Any] = {}
        self._babble: list[Audio] | None = None
        self._tuned: dict[str, TTS] = {}

    def engine(self, name: str) -> TTS:
        if name not in self._engines:
            options: dict[str, Any] = dict(DETERMINISTIC_ENGINE_OPTIONS.get(name, {}))
            if "seed" in inspect.signature(TTS_PROVIDERS.lookup(name)).parameters:
                options["seed"] = self.seed
            self._engines[name] = create_provider("tts", {"provider": name, **options})
            self._identities[name] = self._engines[name].identity()
        return self._engines[name]

    def speaker(self, voice: Voice) -> Speaker:
        engine, _, name = voice.name.partition(":")
        tuned = None
        if engine in TUNED_ENGINES:

            def tuned(tempo: float, pitch_st: float, engine: str = engine) -> tuple[TTS, float]:
                return self.tuned_engine(engine, tempo, pitch_st)

        return Speaker(voice.name, self.engine(engine), name or None, tuned)

    def tuned_engine(self, engine: str, tempo: float, pitch_st: float) -> tuple[TTS, float]:
        """``engine`` set to ``tempo`` and ``pitch_st`` with its own controls, and the pitch
        shift left to do afterwards. espeak: speed = 165 words/min x tempo, pitch = 50 +
        ESPEAK_PITCH_PER_SEMITONE x semitones (measured: about 2.3 semitones per 15 units);
        Piper: length scale = 1 / tempo, no pitch control."""
        options: dict[str, Any]
        if engine == "espeak":
            options = {
                "speed": min(450, max(80, round(ESPEAK_SPEED * tempo))),
                "pitch": min(99, max(0, round(50 + ESPEAK_PITCH_PER_SEMITONE * pitch_st))),
            }
            left = 0.0
        else:
            options = {**DETERMINISTIC_ENGINE_OPTIONS["piper"], "length_scale": round(1 / tempo, 4)}
            left = pitch_st
        key = json.dumps([engine, options], sort_keys=True)
        if key not in self._tuned:
            self._tuned[key] = create_provider("tts", {"provider": engine, **options})
        return self._tuned[key], left

    def voices(self, dialogue_id: str) -> tuple[Voice, Voice]:
        """The user's voice and a second voice of the other gender."""
        start = stable_seed(self.seed, dialogue_id, "voice") % len(self.pool)
        rotated = self.pool[start:] + self.pool[:start]
        user = rotated[0]
        other = next(v for v in rotated[1:] if v.gender != user.gender)
        return user, other

    def babble_clips(self) -> list[Audio]:
        if self._babble is None:
            voices = self.babble_voices or self.pool
            self._babble = [
                self.speaker(voices[i % len(voices)]).say(line, RATE)
                for i, line in enumerate(BABBLE_LINES)
            ]
        return self._babble

    def params_hash(self, dialogue: Dialogue) -> str:
        user, other = self.voices(dialogue.id)
        engines = sorted({v.name.partition(":")[0] for v in (user, other, *self.babble_voices)})
        params = {
            "version": MTALK_RENDER_VERSION,
            "turns": [t.transcript for t in dialogue.turns],
            "id": dialogue.id,
            "seed": self.seed,
            "voices": [user.name, other.name, *(v.name for v in self.babble_voices)],
            "engines": {e: self.engine(e).identity() for e in engines},
        }
        blob = json.dumps(params, sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def renderer(
        self, dialogue_id: str, *, cues: bool = True, ambient: bool = True
    ) -> TurnRenderer:
        user, other = self.voices(dialogue_id)
        return TurnRenderer(
            self.speaker(user), self.speaker(other), self.babble_clips, cues=cues, ambient=ambient
        )

    def render(self, dialogue: Dialogue, out_dir: Path, params_hash: str) -> dict[str, Any]:
        renderer = self.renderer(dialogue.id)
        turns = []
        for number, turn in enumerate(dialogue.turns, 1):
            where = f"dialogue {dialogue.id}: turns.{number}"
            rendered = renderer.render(
                turn.transcript, stable_seed(self.seed, dialogue.id, number), where
            )
            relative = Path("audio") / dialogue.id / f"turn{number}.wav"
            write_audio(rendered.audio, out_dir / relative)
            turns.append(
                {
                    "turn": number,
                    "item_id": turn_item_id(dialogue.id, number),
                    "audio": str(relative),
                    "duration_s": round(rendered.audio.duration, 4),
                    "transcript": turn.transcript,
                    "spoken_text": strip_tags(turn.transcript),
                    "events": rendered.events,
                    "peak_scaled": rendered.peak_scaled,
                }
            )
        return {
            "dialogue_id": dialogue.id,
            "dimension": dialogue.dimension,
            "scenario": dialogue.scenario,
            "params_hash": params_hash,
            "seed": self.seed,
            "rate": RATE,
            "speaker_a": renderer.speaker_a.name,
            "speaker_b": renderer.speaker_b.name,
            "turns": turns,
        }


def check_tags(dialogues: list[Dialogue], where: str) -> None:
    """Every tag of every turn must be one the renderer knows (all problems at once)."""
    problems = []
    for dialogue in dialogues:
        for number, turn in enumerate(dialogue.turns, 1):
            try:
                parse_turn(turn.transcript, f"{where}: dialogue {dialogue.id}: turns.{number}")
            except ConfigError as exc:
                problems.append(str(exc))
    if problems:
        raise ConfigError("\n".join(problems))


def build_dialogue_suite(
    suite: str | Path,
    out_dir: str | Path,
    *,
    seed: int = 0,
    limit: int | None = None,
    engines: tuple[str, ...] = DEFAULT_ENGINES,
    only: list[str] | None = None,
    console: Console | None = None,
    progress: bool = True,
) -> BuiltDialogues:
    """Render every user turn of a dialogue suite (name, file or folder) into ``out_dir``.

    ``limit`` keeps the first N dialogues, ``only`` the dialogues with these ids."""
    loaded = load_dialogue_suite(suite)
    dialogues = loaded.dialogues
    if only is not None:
        unknown = sorted(set(only) - {d.id for d in dialogues})
        if unknown:
            raise ConfigError(f"{loaded.path}: no dialogue with id {', '.join(unknown)}")
        dialogues = [d for d in dialogues if d.id in only]
    if limit is not None:
        dialogues = dialogues[:limit]
    check_tags(dialogues, str(loaded.path))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    builder = DialogueBuilder(seed, engines)
    existing: dict[str, dict[str, Any]] = read_render_log(out / MANIFEST, "dialogue_id")
    built = BuiltDialogues(out_dir=out, name=loaded.name, suite_file=out / "suite.yaml")
    steps: RenderSteps[Dialogue, dict[str, Any]] = RenderSteps(
        key=lambda dialogue: dialogue.id,
        params_hash=builder.params_hash,
        files_present=lambda old: all((out / t["audio"]).is_file() for t in old["turns"]),
        render=builder.render,
    )
    done = render_each(
        dialogues,
        steps,
        out / MANIFEST,
        existing,
        label=loaded.name,
        progress=progress,
        console=console,
    )
    built.entries, built.rendered, built.cached = done.entries, done.rendered, done.cached
    write_manifest(out, built.entries)
    audio_of = {
        (e["dialogue_id"], t["turn"]): str((out / t["audio"]).resolve())
        for e in built.entries
        for t in e["turns"]
    }
    with_audio = [
        d.model_copy(
            update={
                "turns": [
                    t.model_copy(update={"audio": audio_of[(d.id, n)]})
                    for n, t in enumerate(d.turns, 1)
                ]
            }
        )
        for d in dialogues
    ]
    write_dialogue_suite(
        with_audio,
        out,
        loaded.name,
        loaded.description,
        {**loaded.metadata, "built": {"seed": seed, "manifest": MANIFEST, "rate": RATE}},
    )
    summary = {
        "suite": loaded.name,
        "suite_path": str(loaded.path),
        "seed": seed,
        "engines": list(engines),
        "render_version": MTALK_RENDER_VERSION,
        "dialogues": len(dialogues),
        "turns": sum(len(d.turns) for d in dialogues),
        "rendered": built.rendered,
        "cached": built.cached,
    }
    (out / "build.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return built
