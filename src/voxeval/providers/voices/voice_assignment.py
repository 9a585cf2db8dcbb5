"""Choose voices for a set of speaker profiles so that no profile dimension is confounded
with the TTS engine.

Picking the closest voice per profile on its own puts every senior on espeak (the only engine
with native senior voices) and every adult on flite or Piper, so age and engine cannot be
told apart. ``assign_voices(..., balanced=True)`` instead picks one engine per profile for the
whole set: first no dimension whose values share no engine, then as many engines as possible,
then the smallest total voice distance. A profile an engine has no native voice for is made
with a transform (pitch, formants, tempo) of that engine's closest voice, and is labelled so.
An engine is only a candidate for a profile when it has a voice of the profile's gender
(children excepted): a voice shifted across genders is too far from the request.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from voxeval.providers.base import Voice
from voxeval.providers.voices.engine_confounds import count_separated
from voxeval.providers.voices.voice_catalogue import SpeakerProfile, VoiceChoice, rank_voices

EXHAUSTIVE_LIMIT = 50_000  # assignments tried one by one below this; hill-climbing above


def _fields(profile: SpeakerProfile) -> dict[str, str | None]:
    return {"gender": profile.gender, "age": profile.age, "timbre": profile.timbre}


def engine_candidates(
    profile: SpeakerProfile, catalogue: Sequence[Voice]
) -> dict[str, VoiceChoice]:
    """The closest choice of each engine that may render ``profile``, by engine name."""
    engines = list(dict.fromkeys(v.engine for v in catalogue))
    candidates: dict[str, VoiceChoice] = {}
    for engine in engines:
        voices = [v for v in catalogue if v.engine == engine]
        if profile.age != "child" and not any(v.gender == profile.gender for v in voices):
            continue
        ranked = rank_voices(profile, voices)
        if ranked:
            candidates[engine] = ranked[0]
    return candidates


def _objective(
    profiles: Sequence[SpeakerProfile], choices: Sequence[VoiceChoice]
) -> tuple[int, int, float]:
    rows = [(_fields(p), c.voice.engine) for p, c in zip(profiles, choices, strict=True)]
    engines_used = len({c.voice.engine for c in choices})
    return count_separated(rows), -engines_used, round(sum(c.distance for c in choices), 6)


def assign_voices(
    profiles: Sequence[SpeakerProfile], catalogue: Sequence[Voice], *, balanced: bool = True
) -> list[VoiceChoice]:
    """One voice choice per profile (same order). ``balanced=False`` is the closest voice of
    any engine for each profile independently. Deterministic for a given catalogue."""
    if not profiles:
        return []
    closest = [rank_voices(p, list(catalogue)) for p in profiles]
    if not balanced or any(not ranked for ranked in closest):
        return [ranked[0] for ranked in closest if ranked]
    options = [
        list(engine_candidates(p, catalogue).values()) or [r[0]]
        for p, r in zip(profiles, closest, strict=True)
    ]
    size = 1
    for opts in options:
        size *= len(opts)
    if size <= EXHAUSTIVE_LIMIT:
        best = min(itertools.product(*options), key=lambda combo: _objective(profiles, combo))
        return list(best)
    return _hill_climb(profiles, options, [r[0] for r in closest])


def _hill_climb(
    profiles: Sequence[SpeakerProfile],
    options: Sequence[Sequence[VoiceChoice]],
    start: Sequence[VoiceChoice],
) -> list[VoiceChoice]:
    """Change one profile's engine at a time while the objective improves."""
    current = [
        next((o for o in opts if o.voice.engine == s.voice.engine), opts[0])
        for opts, s in zip(options, start, strict=True)
    ]
    score = _objective(profiles, current)
    improved = True
    while improved:
        improved = False
        for index, opts in enumerate(options):
            for option in opts:
                trial = [*current[:index], option, *current[index + 1 :]]
                trial_score = _objective(profiles, trial)
                if trial_score < score:
                    current, score, improved = trial, trial_score, True
    return current
