"""Caller behaviour drawn from the persona's rates with a seeded generator.

Speaking plans: the caller's text is cut at every explicit pause marker ("..."; always a
pause), at clause boundaries (a word ending in , ; : . ! ?) with probability
``pause_rate``, and before a number or code with probability ``number_pause_rate``; pause
lengths are log-normal around the persona's medians (clipped to ``PAUSE_RANGE_S``).

Listening plans: backchannels are a Poisson process at ``backchannel_rate`` per second over the
agent utterance minus its first and last ``BACKCHANNEL_EDGE_S`` (nobody says "mm-hm" before the
agent has said anything, or on top of its last word where a turn is due), thinned to at least
``BACKCHANNEL_GAP_S`` apart; a barge-in happens with probability ``barge_in_rate`` in an
utterance of at least ``barge_in_min_s``, at a Beta-distributed fraction of it.

Speaking and listening draw from two independent streams spawned from the seed, so the plans
depend only on the seed and on the sequence of calls of each kind: the same call replayed gives
the same plans, and a change in what the caller says does not move its backchannels.
"""

from __future__ import annotations

import itertools
import re

import numpy as np

from voxeval.simulation.caller_behaviour import (
    PAUSE_MARKER,
    Backchannel,
    BargeIn,
    CallerBehaviourBase,
    ListeningPlan,
    SpeakingPlan,
)
from voxeval.simulation.personas import (
    BARGE_IN_EARLIEST_S,
    PAUSE_RANGE_S,
    Persona,
    backchannel_phrases,
    get_persona,
)

BACKCHANNEL_EDGE_S = 0.5
BACKCHANNEL_GAP_S = 1.5
# A barge-in this close to the end of the utterance is a turn change, not a barge-in.
BARGE_IN_LATEST_BEFORE_END_S = 0.3
# Tag mixed into the seed so behaviour draws never coincide with other users of the call seed.
_STREAM_TAG = 0xBE4A

_CLAUSE_END = re.compile(r"[,;:.!?]$")
_CODE = re.compile(r"^(?=.*\d)[\w-]+$|^[A-Z][A-Z0-9-]{2,}$")
# Spelled-out digits, as callers read codes ("five, five, two"), English and Spanish.
_DIGIT_WORDS = frozenset(
    {"zero", "oh", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}
    | {"cero", "uno", "una", "dos", "tres", "cuatro", "cinco", "seis", "siete", "ocho", "nueve"}
)


def is_number_or_code(word: str) -> bool:
    """A token a forgetful caller has to look up: has a digit, is an upper-case code (AB12,
    KXQ), or is a spelled-out digit."""
    bare = word.strip(".,;:!?\"'()")
    return bool(bare) and (bool(_CODE.match(bare)) or bare.lower() in _DIGIT_WORDS)


class RuleBehaviour(CallerBehaviourBase):
    """Persona-rate behaviour; deterministic per (persona, language, seed) and call order."""

    def __init__(
        self, persona: Persona | str | None = None, language: str = "en", seed: int = 0
    ) -> None:
        self.persona = persona if isinstance(persona, Persona) else get_persona(persona)
        self.language = language
        self.seed = int(seed)
        self.phrases = backchannel_phrases(language)
        speaking, listening = np.random.SeedSequence([self.seed, _STREAM_TAG]).spawn(2)
        self._speak_rng = np.random.default_rng(speaking)
        self._listen_rng = np.random.default_rng(listening)

    # ------------------------------------------------------------------ speaking
    def _pause(self, median_s: float) -> float:
        draw = median_s * float(
            np.exp(self.persona.pause_sigma * self._speak_rng.standard_normal())
        )
        return round(float(np.clip(draw, *PAUSE_RANGE_S)), 3)

    def speaking_plan(self, text: str) -> SpeakingPlan:
        segments = [s for s in PAUSE_MARKER.split(text.strip()) if s.strip()]
        if not segments:
            return SpeakingPlan((text.strip(),))
        persona = self.persona
        pieces: list[str] = []
        pauses: list[float] = []
        for index, segment in enumerate(segments):
            if index:  # an explicit marker: the caller always pauses there
                pauses.append(self._pause(persona.pause_median_s))
            words = segment.split()
            current = [words[0]]
            for previous, word in itertools.pairwise(words):
                pause = None
                starts_code = is_number_or_code(word) and not is_number_or_code(previous)
                if starts_code and self._speak_rng.random() < persona.number_pause_rate:
                    pause = self._pause(persona.number_pause_median_s)
                elif _CLAUSE_END.search(previous) and self._speak_rng.random() < persona.pause_rate:
                    pause = self._pause(persona.pause_median_s)
                if pause is None:
                    current.append(word)
                    continue
                pieces.append(" ".join(current))
                pauses.append(pause)
                current = [word]
            pieces.append(" ".join(current))
        return SpeakingPlan(tuple(pieces), tuple(pauses))

    # ------------------------------------------------------------------ listening
    def backchannels(
        self, duration_s: float, before_s: float | None = None
    ) -> tuple[Backchannel, ...]:
        """Poisson backchannels inside the utterance's edges (and ``BACKCHANNEL_EDGE_S``
        before ``before_s``, a barge-in, when given)."""
        rng = self._listen_rng
        end = duration_s - BACKCHANNEL_EDGE_S
        window = end - BACKCHANNEL_EDGE_S
        if window <= 0:
            return ()
        count = int(rng.poisson(self.persona.backchannel_rate * window))
        times = np.sort(rng.uniform(BACKCHANNEL_EDGE_S, end, count))
        choices = rng.integers(len(self.phrases), size=count)
        limit = end if before_s is None else min(end, before_s - BACKCHANNEL_EDGE_S)
        kept: list[Backchannel] = []
        for t, choice in zip(times, choices, strict=True):
            if t > limit:
                break
            if kept and t - kept[-1].at_s < BACKCHANNEL_GAP_S:
                continue
            kept.append(Backchannel(round(float(t), 3), self.phrases[int(choice)]))
        return tuple(kept)

    def barge_in(self, duration_s: float) -> BargeIn | None:
        persona = self.persona
        rng = self._listen_rng
        # Both numbers are always drawn: an ineligible utterance shifts nothing downstream.
        cut, fraction = rng.random(), rng.beta(*persona.barge_in_beta)
        latest = duration_s - BARGE_IN_LATEST_BEFORE_END_S
        eligible = duration_s >= persona.barge_in_min_s and latest > BARGE_IN_EARLIEST_S
        if not eligible or cut >= persona.barge_in_rate:
            return None
        at = float(np.clip(fraction * duration_s, BARGE_IN_EARLIEST_S, latest))
        return BargeIn(round(at, 3))

    def listening_plan(self, agent_text: str, agent_duration_s: float) -> ListeningPlan:
        barge = self.barge_in(agent_duration_s)
        backchannels = self.backchannels(agent_duration_s, barge.at_s if barge else None)
        return ListeningPlan(backchannels, barge)
