"""Render a query suite to audio over speaker profiles x noise conditions.

Output folder::

    DIR/manifest.jsonl   one line per rendered item: every choice made (voice, transform,
                         noise source and offset, ratio/SNR, room and device, seeds,
                         durations, params hash)
    DIR/audio/<query>/<profile>__<condition>.wav
    DIR/build.json       options, noise-library description, counts

Building is idempotent: an item whose manifest entry has the same parameter hash and whose
audio file exists is not rendered again. Entries are appended as they are rendered, so an
interrupted build resumes where it stopped.
"""

from __future__ import annotations

import gc
import hashlib
import inspect
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
from rich.console import Console

from voxeval.audio import (
    MAX_GAIN_DB,
    Audio,
    fit_rms,
    mix_at_ratio,
    mix_at_snr,
    play_through,
    ratio_to_snr_db,
    resample,
    reverberate,
    rms,
    room_response,
    write_audio,
)
from voxeval.audio.loudspeaker import device_preset
from voxeval.benchmarks.build_manifest import (
    MANIFEST,
    BuiltSuite,
    RenderJob,
    load_built_suite,
    plan_jobs,
    read_manifest,
    stable_seed,
    write_manifest,
)
from voxeval.benchmarks.build_options import BuildOptions, parse_build_options, profile_label
from voxeval.benchmarks.noise import NoiseClip, NoiseLibrary
from voxeval.benchmarks.render_log import RenderSteps, render_each
from voxeval.benchmarks.wildspeech.query_suite import (
    SuiteAudioInput,
    load_query_suite,
    read_query_audio,
    suite_audio_input,
    suite_file_path,
    suite_name,
)
from voxeval.benchmarks.wildspeech.render import render_query
from voxeval.benchmarks.wildspeech.spoken_query import (
    ACOUSTIC_CONDITIONS,
    VOICE_CONDITIONS,
    SpeakerSpec,
    SpokenQuery,
)
from voxeval.errors import ConfigError, ProviderUnavailable
from voxeval.json_types import JSONObject, JSONReadObject
from voxeval.providers.base import TTS
from voxeval.providers.factory import create_provider
from voxeval.providers.provider_kinds import TTS_PROVIDERS
from voxeval.providers.runtime.freed_memory import release_freed_memory
from voxeval.providers.tts.tts_kokoro import release_model as release_kokoro_model
from voxeval.providers.voices.engine_confounds import engine_confounds
from voxeval.providers.voices.speaker_transform import SpeakerTransform
from voxeval.providers.voices.voice_assignment import assign_voices
from voxeval.providers.voices.voice_catalogue import (
    FORMANT_ENGINES,
    SpeakerProfile,
    Voice,
    VoiceChoice,
    naturalness,
    voice_catalogue,
)

RENDER_VERSION = 4  # bump when rendering changes so cached audio is rebuilt
ACOUSTICS_VERSION = 1  # bump when the room or loudspeaker simulation changes
SPEECH_RMS_DBFS = -20.0
BABBLE_TTS_CLIPS = 6
# Piper's sampled noise makes speech a little livelier (DistillMOS 3.9 instead of 3.6 on one
# test sentence). It is seeded either way (engines taking a ``seed`` get the build seed);
# ``deterministic_tts`` (the default) turns it off, so a voice does not vary with the seed.
DETERMINISTIC_ENGINE_OPTIONS: dict[str, dict[str, float]] = {
    "piper": {"noise_scale": 0.0, "noise_w_scale": 0.0}
}
# Engines that change their own speaking rate: a profile's tempo is passed to the engine (the
# model lengthens phonemes and pauses as a speaker would) instead of a phase-vocoder time
# stretch, which smears consonants, and its pitch shift is a resampling (varispeed) of speech
# synthesized that much slower, instead of a phase-vocoder pitch shift, which roughens the
# voice (DNSMOS OVRL -0.7 to -0.9 for 1.4-1.8 semitones). Kokoro's speed scales the whole
# utterance; Piper's length scale stretches phonemes but not its fixed silences, so a short
# Piper query slows by less than the tempo asks. engine -> (option, value at tempo).
NATIVE_TEMPO: dict[str, tuple[str, Callable[[float], float]]] = {
    "piper": ("length_scale", lambda tempo: round(1.0 / tempo, 4)),
    "kokoro": ("speed", lambda tempo: round(tempo, 4)),
}


class SuiteBuilder:
    """Holds engines, voice choices and the noise library for one build."""

    def __init__(
        self,
        options: BuildOptions,
        queries: list[SpokenQuery],
        audio_input: SuiteAudioInput | None = None,
        suite_path: str = "suite",
    ) -> None:
        self.options = options
        self.queries = queries
        self.audio_input = audio_input or SuiteAudioInput()
        self.suite_path = suite_path
        self.noise = NoiseLibrary(
            options.noise_dirs, generated=options.generated_noise, rate=options.rate
        )
        self._catalogue: list[Voice] | None = None
        self._choices: dict[str, VoiceChoice] = {}
        self._synthetic_choices: dict[str, VoiceChoice] = {}
        self._engines: dict[str, TTS] = {}
        self._identities: dict[str, JSONObject] = {}
        self._speech: dict[str, tuple[Audio, JSONObject]] = {}
        self._babble_pool: list[Audio] | None = None
        self._digests: dict[str, str] = {}

    def release_engines(self) -> None:
        """Drop the build's TTS engines, the models only the build loaded (Kokoro: a run's
        system and scoring do not speak with it) and the noise clips, and give the freed
        heap back to the system, so a run's units do not carry the build's memory."""
        used = {name.partition("@")[0] for name in self._engines}
        self._engines.clear()
        self._speech.clear()
        self._babble_pool = None
        self.noise.forget_clips()
        if "kokoro" in used:
            release_kokoro_model()
        gc.collect()  # the engines' sessions, if a cycle holds them
        release_freed_memory()

    def engine(self, name: str) -> TTS:
        if name not in self._engines:
            options = self._base_options(name)
            self._engines[name] = create_provider("tts", {"provider": name, **options})
            self._identities[name] = self._engines[name].identity()
        return self._engines[name]

    def voice_engine(
        self, name: str, transform: SpeakerTransform
    ) -> tuple[TTS, SpeakerTransform, bool]:
        """The engine that speaks a voice choice, the transform left to apply to its audio,
        and whether that transform shifts pitch by varispeed: an engine with its own rate
        control speaks at the profile's tempo divided by the pitch factor, and the varispeed
        that raises (or lowers) the pitch brings it back to the profile's tempo."""
        if name not in NATIVE_TEMPO or (transform.tempo == 1.0 and not transform.pitch_semitones):
            return self.engine(name), transform, False
        option, value = NATIVE_TEMPO[name]
        rate = transform.tempo / 2.0 ** (transform.pitch_semitones / 12.0)
        key = f"{name}@{option}={value(rate)}"
        if key not in self._engines:
            self.engine(name)  # the base options and identity
            options = {**self._base_options(name), option: value(rate)}
            self._engines[key] = create_provider("tts", {"provider": name, **options})
        return self._engines[key], replace(transform, tempo=1.0), True

    def _base_options(self, name: str) -> dict[str, float]:
        deterministic = self.options.deterministic_tts
        options = DETERMINISTIC_ENGINE_OPTIONS.get(name, {}) if deterministic else {}
        if "seed" in inspect.signature(TTS_PROVIDERS.lookup(name)).parameters:
            options = {**options, "seed": self.options.seed}
        return dict(options)

    def assign(self, specs: list[SpeakerSpec]) -> None:
        """Choose the voices of every synthesized profile of the build together (see
        ``voice_choice``). Profiles are taken in label order, so the choice does not depend
        on the order queries meet them (``assign: rotate`` with another seed)."""
        by_label = {profile_label(s): s for s in specs}
        labels = sorted(label for label in by_label if label not in self._choices)
        if not labels:
            return
        if self._catalogue is None:
            self._catalogue = voice_catalogue(tuple(self.options.engines))
        profiles = [speaker_profile(by_label[label]) for label in labels]
        balanced = self.options.voice_choice == "balanced"
        chosen = assign_voices(profiles, self._catalogue, balanced=balanced)
        if len(chosen) != len(labels):
            raise ProviderUnavailable(
                "no local TTS voice is available (install voxeval[embedded], espeak-ng or flite)"
            )
        self._choices.update(zip(labels, chosen, strict=True))

    def choice(self, spec: SpeakerSpec, condition: str = "clean") -> VoiceChoice:
        """The voice a profile is spoken with: the build's voice, or under the
        ``synthetic_voice`` condition the formant synthesizer voice of that profile."""
        if condition in VOICE_CONDITIONS:
            return self.synthetic_choice(spec)
        label = profile_label(spec)
        if label not in self._choices:
            self.assign([spec])
        return self._choices[label]

    def synthetic_choice(self, spec: SpeakerSpec) -> VoiceChoice:
        """The formant synthesizer voice (espeak-ng or flite) of a profile, chosen over every
        profile of the build the way the natural voices are (``voice_choice``)."""
        label = profile_label(spec)
        if label not in self._synthetic_choices:
            specs = {profile_label(s): s for s in self.options.profile_specs()}
            specs[label] = spec
            labels = sorted(specs)
            catalogue = voice_catalogue(FORMANT_ENGINES)
            chosen = assign_voices(
                [speaker_profile(specs[x]) for x in labels],
                catalogue,
                balanced=self.options.voice_choice == "balanced",
            )
            if len(chosen) != len(labels):
                raise ProviderUnavailable(
                    "the synthetic_voice condition needs espeak-ng or flite "
                    "(Debian/Ubuntu: apt-get install espeak-ng flite)"
                )
            self._synthetic_choices.update(zip(labels, chosen, strict=True))
        return self._synthetic_choices[label]

    def params_hash(self, job: RenderJob) -> str:
        params: JSONObject = {
            "version": RENDER_VERSION,
            "query": job.query.model_dump(mode="json", exclude={"metadata", "channels"}),
            "profile": job.label,
            "condition": job.condition,
            "rate": self.options.rate,
            "seed": self.options.seed,
        }
        if job.query.audio is not None:
            params["recording"] = self.recording_digest(job.query.audio)
            params["input"] = {"channels": job.query.channels, "max_gain_db": MAX_GAIN_DB}
        else:
            choice = self.choice(job.profile, job.condition)
            engine = choice.voice.name.partition(":")[0]
            self.engine(engine)
            params["voice"] = choice.voice.name
            params["transform"] = asdict(choice.transform)
            params["engine"] = self._identities[engine]
        if job.condition in ACOUSTIC_CONDITIONS and not is_released(job.query):
            params["acoustics"] = self.acoustics_params(job.condition)
        elif job.condition not in ("clean", *VOICE_CONDITIONS) and not is_released(job.query):
            params["level"] = {"ratio": self.options.ratio, "snr_db": self.options.snr_db}
            params["noise"] = {k: v for k, v in self.noise.describe().items() if k != "notes"}
        blob = json.dumps(params, sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def acoustics_params(self, condition: str) -> JSONObject:
        """What an acoustic condition's audio depends on besides the speech and the seed."""
        params: JSONObject = {
            "version": ACOUSTICS_VERSION,
            "placements": self.options.room_placements,
        }
        if condition == "reverb":
            params["room"] = self.options.reverb_room().describe()
        else:
            recapture = self.options.recapture_room()
            params["device"] = device_preset(self.options.device).describe()
            params["room"] = recapture.describe() if recapture else None
        return params

    def acoustics(self, job: RenderJob, speech: Audio) -> tuple[Audio, JSONObject]:
        """``speech`` through the room (``reverb``) or the loudspeaker and room (``playback``),
        and what the manifest records about it. Each item uses one of ``room_placements``
        placements of the condition, picked from (seed, query, profile): a few simulated rooms
        serve a whole suite."""
        placements = self.options.room_placements
        index = stable_seed(self.options.seed, job.query.id, job.label) % placements
        seed = stable_seed(self.options.seed, job.condition, index)
        info: JSONObject = {"placement": index, "placements": placements}
        if job.condition == "reverb":
            setup = self.options.reverb_room()
            audio = speech
        else:
            preset = device_preset(self.options.device)
            info["device"] = preset.describe()
            audio = play_through(speech, preset.name)
            recapture = self.options.recapture_room()
            if recapture is None:
                return audio, info
            setup = recapture
        response = room_response(setup, speech.rate, seed)
        info["room"] = response.describe()
        return reverberate(audio, response), info

    def recording_digest(self, path: str) -> str:
        """The hash of a recording's bytes: a cache key that follows the content, not the
        file's name, size or time."""
        if path not in self._digests:
            self._digests[path] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
        return self._digests[path]

    def speech(self, job: RenderJob) -> tuple[Audio, JSONObject]:
        """The clean utterance (cached across conditions) and how it was made."""
        synthetic = job.condition in VOICE_CONDITIONS and job.query.audio is None
        cache_key = f"{job.item_id}#synthetic" if synthetic else job.item_id
        if cache_key not in self._speech:
            query = job.query
            if query.audio is not None:
                audio = read_query_audio(query, self.audio_input, self.suite_path)
                info: JSONObject = {"voice": "recorded", "source_audio": query.audio}
            else:
                choice = self.choice(job.profile, job.condition)
                natural, natural_note = naturalness(speaker_profile(job.profile), choice.voice)
                engine, _, voice = choice.voice.name.partition(":")
                tts, transform, varispeed = self.voice_engine(engine, choice.transform)
                rendered = render_query(tts, query, voice or None)
                audio = transform.apply(rendered.audio, varispeed_pitch=varispeed)
                info = {
                    "voice": choice.voice.name,
                    "engine": engine,
                    "voice_fields": {
                        "gender": choice.voice.gender,
                        "age": choice.voice.age,
                        "timbre": choice.voice.timbre,
                    },
                    # the profile is the voice as it is, or a transform of it
                    "speaker_source": "native" if choice.transform.is_identity else "transform",
                    # native / transformed / synthetic, and why when not native
                    "naturalness": natural,
                    "naturalness_note": natural_note,
                    "transform": asdict(choice.transform),
                    "transform_text": choice.transform.describe(),
                    # tempo spoken by the engine itself, pitch moved by resampling (no vocoder)
                    "native_tempo": engine in NATIVE_TEMPO and not choice.transform.is_identity,
                    "distance": choice.distance,
                    "explanation": choice.explanation,
                    "chunks": [*rendered.chunks],
                    "marks_applied": [*rendered.marks],
                }
            level = fit_rms(resample(audio, self.options.rate), SPEECH_RMS_DBFS)
            if level.capped:  # near-silent input: kept quiet (boost capped) and flagged
                info["level"] = {**level.details()}
            audio = level.audio
            # only the current item's utterances (natural and synthetic) are reused
            kept = {k: v for k, v in self._speech.items() if k.split("#")[0] == job.item_id}
            self._speech = {**kept, cache_key: (audio, info)}
        return self._speech[cache_key]

    def babble_pool(self, exclude_voice: str) -> list[Audio]:
        """TTS clips of other voices, used for babble only when no recorded speech exists."""
        if self._babble_pool is None:
            catalogue = self._catalogue or voice_catalogue(tuple(self.options.engines))
            others = [v for v in catalogue if v.name != exclude_voice]
            # Spread over the catalogue so the talkers differ in engine, accent and variant.
            voices = others[:: max(1, len(others) // BABBLE_TTS_CLIPS)][:BABBLE_TTS_CLIPS]
            texts = [q.text for q in self.queries if q.audio is None][: len(voices)] or [
                "one two three"
            ]
            self._babble_pool = []
            for i, voice in enumerate(voices):
                engine, _, name = voice.name.partition(":")
                self._babble_pool.append(
                    self.engine(engine).synthesize(texts[i % len(texts)], voice=name)
                )
        return self._babble_pool

    def noise_clip(self, job: RenderJob, speech: Audio, voice: str, seed: int) -> NoiseClip:
        if job.condition == "natural_noise":
            return self.noise.sample_natural(seed)
        extra = [] if self.noise.scan.speech else self.babble_pool(voice)
        return self.noise.babble(seed, speech.duration + 0.5, extra)

    def render(self, job: RenderJob, out_dir: Path, params_hash: str) -> JSONObject:
        speech, info = self.speech(job)
        entry: JSONObject = {
            "key": job.key,
            "item_id": job.item_id,
            "query_id": job.query.id,
            "category": job.query.category,
            "subcategory": job.query.subcategory,
            "profile": job.label,
            "profile_fields": job.profile.model_dump(exclude_none=True),
            "condition": job.condition,
            "seed": self.options.seed,
            "params_hash": params_hash,
            "speech_duration_s": round(speech.duration, 4),
            **info,
        }
        audio = speech
        if is_released(job.query):
            # The recording already carries its condition: evaluated as released, no more noise.
            entry["released"] = True
        elif job.condition in ACOUSTIC_CONDITIONS:
            audio, entry["acoustics"] = self.acoustics(job, speech)
        elif job.condition not in ("clean", *VOICE_CONDITIONS):
            seed = stable_seed(self.options.seed, job.query.id, job.label, job.condition)
            clip = self.noise_clip(job, speech, str(info["voice"]), seed)
            offset = int(np.random.default_rng(seed).integers(clip.audio.num_samples))
            fitted = _loop_from(clip.audio, offset, speech.num_samples)
            if self.options.ratio is not None:
                audio = mix_at_ratio(speech, fitted, self.options.ratio)
                snr = ratio_to_snr_db(self.options.ratio)
            else:
                assert self.options.snr_db is not None
                audio = mix_at_snr(speech, fitted, self.options.snr_db)
                snr = self.options.snr_db
            entry["noise"] = {**clip.describe(), "offset_s": round(offset / clip.audio.rate, 4)}
            entry["noise_ratio"] = self.options.ratio
            entry["snr_db"] = round(snr, 3)
        relative = Path("audio") / job.query.id / f"{job.label}__{job.condition}.wav"
        write_audio(audio, out_dir / relative)
        entry["audio"] = str(relative)
        entry["duration_s"] = round(audio.duration, 4)
        entry["query"] = job.query.model_dump(mode="json")
        return entry


def is_released(query: SpokenQuery) -> bool:
    """A recording that declares its own condition (e.g. a WildSpeech-Bench release row): it
    is played only under that condition and never mixed with noise."""
    return query.audio is not None and query.condition is not None


def speaker_profile(spec: SpeakerSpec) -> SpeakerProfile:
    """The voice-selection profile of a suite's speaker spec (unset fields: female adult)."""
    return SpeakerProfile(
        gender=spec.gender or "female",
        age=spec.age or "adult",
        accent=spec.accent,
        timbre=spec.timbre,
    )


def profile_voices(options: BuildOptions) -> list[tuple[str, VoiceChoice]]:
    """The voice each profile of ``options`` gets (as a build would choose it), by label."""
    by_label = {profile_label(s): s for s in options.profile_specs()}
    labels = sorted(by_label)
    catalogue = voice_catalogue(tuple(options.engines))
    chosen = assign_voices(
        [speaker_profile(by_label[label]) for label in labels],
        catalogue,
        balanced=options.voice_choice == "balanced",
    )
    return list(zip(labels, chosen, strict=True))


def suite_engine_confounds(entries: Sequence[JSONObject]) -> dict[str, JSONObject]:
    """``engine_confounds`` of a built suite's synthesized items (manifest entries)."""
    rows = [
        (fields if isinstance(fields := e.get("profile_fields"), dict) else {}, str(e["engine"]))
        for e in entries
        if e.get("engine") and e.get("voice") != "recorded"
    ]
    return engine_confounds(rows)


def profile_voice_notes(entries: Sequence[JSONObject]) -> dict[str, JSONObject]:
    """``{profile: {voice, engine, naturalness, note}}`` of a built suite's synthesized items
    (manifest entries), leaving out the synthetic_voice condition's formant voices."""
    notes: dict[str, JSONObject] = {}
    for entry in entries:
        if entry.get("condition") in VOICE_CONDITIONS or not entry.get("engine"):
            continue
        if entry.get("voice") == "recorded" or entry.get("profile") in notes:
            continue
        notes[str(entry["profile"])] = {
            "voice": entry.get("voice"),
            "engine": entry.get("engine"),
            "naturalness": entry.get("naturalness"),
            "note": entry.get("naturalness_note"),
        }
    return dict(sorted(notes.items()))


def _loop_from(noise: Audio, offset: int, length: int) -> Audio:
    """``length`` samples of ``noise`` starting at ``offset``, wrapping around."""
    if rms(noise) == 0.0:
        raise ConfigError(f"{noise.source}: noise clip is silent")
    reps = -(-(offset + length) // noise.num_samples)
    return noise.with_samples(np.tile(noise.samples, reps)[offset : offset + length])


def resolve_options(
    options: BuildOptions | JSONReadObject | None,
    *,
    seed: int | None = None,
    conditions: list[str] | None = None,
    limit: int | None = None,
) -> BuildOptions:
    """Build options from a ``build:`` mapping (or options), with run-level ``seed``,
    ``conditions`` and ``limit`` applied unless the mapping sets them itself."""
    if options is None:
        options = BuildOptions()
    elif not isinstance(options, BuildOptions):
        options = parse_build_options(options)
    explicit = options.model_fields_set
    updates: JSONObject = {}
    if seed is not None and "seed" not in explicit:
        updates["seed"] = seed
    if conditions and "conditions" not in explicit:
        updates["conditions"] = list(conditions)
    if limit is not None and "limit" not in explicit:
        updates["limit"] = limit
    if not updates:
        return options
    return parse_build_options({**options.model_dump(exclude_unset=True), **updates})


def build_suite(
    suite: str | Path,
    out_dir: str | Path,
    options: BuildOptions | JSONReadObject | None = None,
    *,
    seed: int | None = None,
    conditions: list[str] | None = None,
    limit: int | None = None,
    console: Console | None = None,
    progress: bool = True,
) -> BuiltSuite:
    """Render ``suite`` (name, file or folder) into ``out_dir``; returns every item and how
    many were rendered versus reused from an earlier identical build.

    ``options`` is a ``BuildOptions`` or a run config's ``build:`` mapping; ``seed``,
    ``conditions`` and ``limit`` from the run apply where the mapping leaves them unset.
    """
    options = resolve_options(options, seed=seed, conditions=conditions, limit=limit)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    queries = load_query_suite(suite)
    builder = SuiteBuilder(options, queries, suite_audio_input(suite), str(suite_file_path(suite)))
    jobs = plan_jobs(queries, options)
    builder.assign([j.profile for j in jobs if j.query.audio is None])
    existing = read_manifest(out)
    built = BuiltSuite(out_dir=out, name=suite_name(suite), noise=builder.noise.describe())
    steps: RenderSteps[RenderJob, JSONObject] = RenderSteps(
        key=lambda job: job.key,
        params_hash=builder.params_hash,
        files_present=lambda old: (out / str(old["audio"])).exists(),
        render=builder.render,
    )
    try:
        done = render_each(
            jobs,
            steps,
            out / MANIFEST,
            existing,
            label=built.name,
            progress=progress,
            console=console,
        )
    finally:
        builder.release_engines()
    built.rendered, built.cached = done.rendered, done.cached
    entries = {job.key: entry for job, entry in zip(jobs, done.entries, strict=True)}
    ordered = [entries[j.key] for j in jobs]
    write_manifest(out, ordered)
    summary = {
        "suite": built.name,
        "suite_path": str(suite_file_path(suite)),
        "options": options.model_dump(mode="json"),
        "noise_library": built.noise,
        "items": len(jobs),
        "rendered": built.rendered,
        "cached": built.cached,
        "confounded": suite_engine_confounds(ordered),
    }
    (out / "build.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    built.items = load_built_suite(out)
    return built


def prepare_suite_audio(
    suite: str | Path,
    run_dir: str | Path,
    build: JSONReadObject | BuildOptions | None = None,
    *,
    seed: int | None = None,
    conditions: list[str] | None = None,
    limit: int | None = None,
    progress: bool = True,
) -> BuiltSuite:
    """Audio for a run (the single-turn protocol's ``plan``).

    ``build`` is the run config's ``build:`` section. With only ``dir:`` naming a folder that
    already holds a manifest, that prebuilt suite is used as it is (filtered by
    ``conditions`` and ``limit``). Otherwise the suite is built (idempotently) into ``dir``
    or ``<run_dir>/suite_audio``.
    """
    options = build if isinstance(build, BuildOptions) else parse_build_options(build)
    target = Path(options.dir) if options.dir else Path(run_dir) / "suite_audio"
    prebuilt = bool(options.dir) and options.model_fields_set <= {"dir"}
    if prebuilt and not (target / MANIFEST).exists():
        # the run check reports this first; a direct call must not quietly render either
        raise ConfigError(
            f"build.dir: {target}: no prebuilt suite there ({MANIFEST} missing); build it "
            "first (voxeval build), or give build options to render into it"
        )
    if prebuilt:
        items = load_built_suite(target)
        if conditions:
            items = [i for i in items if i.condition in conditions]
        if limit:
            keep = list(dict.fromkeys(i.query.id for i in items))[:limit]
            items = [i for i in items if i.query.id in keep]
        return BuiltSuite(out_dir=target, name=str(suite), items=items, cached=len(items))
    return build_suite(
        suite, target, options, seed=seed, conditions=conditions, limit=limit, progress=progress
    )
