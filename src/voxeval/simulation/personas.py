"""Behavioural caller personas (EVA's behavioural perturbation axis).

A persona changes what the caller says (LLM prompt text, scripted-caller fillers), how fast it
speaks (``speech_rate``: 1 = normal), may bring its own voice (an accent perturbation still
takes precedence), and sets the *rates* from which the caller's on-line behaviour is drawn:
pauses inside its own turns, backchannels ("mm-hm") while the agent speaks and barge-ins.
No timing is fixed: ``RuleBehaviour`` draws every plan from these rates with a seeded
generator, and ``LLMBehaviour`` lets the caller's LLM decide, with the rates as its fallback.

Where the numbers come from (conversation-analysis and phonetics ranges, scaled per persona):

* Pause lengths. Silent pauses inside a speaker's turn are roughly log-normal and mostly
  between 0.2 and 1 s, with a tail of long (> 1 s) hesitation pauses (Campione & Véronis
  2002, a multilingual corpus study; Heldner & Edlund 2010, pauses and gaps in dialogue
  corpora). We draw log-normal pauses (``pause_median_s``, ``pause_sigma``), clipped to
  ``PAUSE_RANGE_S``. About 1 s of silence is where listeners start treating a silence as a
  problem (Jefferson's 1989 "standard maximum"): elderly and forgetful medians sit around or
  above it on purpose, to test whether the agent waits out a caller who is mid-thought.
* Older speakers talk more slowly and pause more often and longer (see the review by
  Mortensen, Meyer & Humphreys 2006): ``elderly_slow`` pauses at a third of its clause
  boundaries, with a 1.1 s median.
* Hesitations cluster before hard-to-retrieve words (Beattie & Butterworth 1979): the
  ``forgetful_disorganized`` caller pauses before most numbers and codes
  (``number_pause_rate``), for longer (``number_pause_median_s``: finding the card).
* Backchannels. In English telephone conversation reactive tokens ("uh-huh", "right",
  "yeah") are a large share of what listeners say (about a fifth of the Switchboard dialogue
  acts, Jurafsky et al. 1997) and come at a rate of very roughly one every 5-20 s of the
  other's speech, depending on speaker and task (Ward & Tsukahara 2000 study where they fall).
  ``backchannel_rate`` is per second of agent speech: 0.1 (one per ~10 s) by default, which
  ``voxeval analyze timing`` measures at about 4 per minute of agent speech (the edges of an
  utterance and short utterances get none), inside the 3-12 per minute above (0.06 measured
  about 2); more for the attentive elderly caller, almost none for the impatient one.
* Barge-ins. Callers rarely cut a well-behaved agent off; impatient ones do so once they have
  the gist, usually in the first half of a long answer. ``barge_in_rate`` is the chance per
  agent utterance of at least ``barge_in_min_s``; the point is a Beta(``barge_in_beta``)
  fraction of the utterance (never before ``BARGE_IN_EARLIEST_S``). These are design choices
  for a stress test rather than corpus figures: no corpus we know gives interruption rates
  for voice-agent callers.
* Interruptions with content. A barge-in is a correction, a fact volunteered before it is
  asked or an urgent question from the goal with ``interruption_content_rate`` (else it is
  impatience only: a filler and "Okay."); ``slip_rate`` is the chance per call that the
  caller first misstates a key fact and then cuts in to correct it. Design choices again:
  they make the barge-ins test whether the agent takes up what it is told mid-sentence
  (Full-Duplex-Bench's user-interruption task measures the same thing).
* Response gaps. People answer fast: across ten languages the most common offset between one
  speaker's turn end and the next one's start is about 200 ms, and the per-language means lie
  between 7 and 469 ms (Stivers et al. 2009; review: Levinson & Torreira 2015). The caller's
  silence after the agent stops is log-normal (``gap_median_s``, ``gap_sigma``): median 0.25 s
  and sigma 0.5 by default, so its mode is about 195 ms and its mean about 285 ms. Elderly
  callers take longer on purpose (median 0.6 s); the impatient one answers sooner. Clipped to
  ``GAP_RANGE_S``. ``voxeval analyze timing RUN`` compares a run with these figures.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from voxeval.errors import ConfigError
from voxeval.providers.asr.spoken_language import base_language

# Drawn pauses are clipped to this range (s): shorter silences are not heard as pauses, and a
# caller silent for more than 4 s mid-sentence is no longer "thinking" but gone.
PAUSE_RANGE_S = (0.2, 4.0)
# A listener needs to hear something before objecting to it: no barge-in before this (s).
BARGE_IN_EARLIEST_S = 1.0
# Drawn response gaps are clipped to this range (s): the caller needs a frame to react, and a
# longer silence before answering is no longer a gap but a lapse.
GAP_RANGE_S = (0.02, 3.0)


@dataclass(frozen=True)
class Persona:
    name: str
    prompt: str  # added to the LLM caller's instructions
    speech_rate: float = 1.0
    fillers: tuple[str, ...] = ()  # scripted caller opens answers with these
    voice: str | None = None  # speaker profile that replaces the caller voice (accent wins)
    # pauses inside the caller's own turns
    pause_rate: float = 0.05  # chance of a pause at each clause boundary (",", ";", ".", ...)
    pause_median_s: float = 0.5  # log-normal length of a pause (also for explicit "...")
    pause_sigma: float = 0.4
    number_pause_rate: float = 0.0  # chance of a pause just before a number or code
    number_pause_median_s: float = 1.5
    # listening
    backchannel_rate: float = 0.1  # backchannels per second of agent speech
    barge_in_rate: float = 0.02  # chance of cutting into an agent utterance ...
    barge_in_min_s: float = 6.0  # ... that lasts at least this long
    barge_in_beta: tuple[float, float] = (6.0, 2.0)  # where: Beta(a, b) fraction of it
    # what a barge-in says: the chance that it carries content (a correction, a fact the agent
    # will need, an urgent question from the goal) rather than impatience alone
    interruption_content_rate: float = 0.5
    # chance per call of misstating one key fact (an ID, a date) first and correcting it by
    # cutting into the agent's next utterance (or at the next turn when that is too short)
    slip_rate: float = 0.0
    # silence before answering once the agent stops (log-normal median and sigma)
    gap_median_s: float = 0.25
    gap_sigma: float = 0.5

    def __post_init__(self) -> None:
        rates = ("pause_rate", "number_pause_rate", "barge_in_rate")
        for field in (*rates, "interruption_content_rate", "slip_rate"):
            value = getattr(self, field)
            if not 0.0 <= value <= 1.0:
                raise ConfigError(f"persona {self.name!r}: {field} must be in [0, 1], got {value}")
        for field in ("pause_median_s", "number_pause_median_s", "speech_rate", "gap_median_s"):
            if getattr(self, field) <= 0:
                raise ConfigError(f"persona {self.name!r}: {field} must be positive")
        if min(self.pause_sigma, self.backchannel_rate, self.barge_in_min_s, self.gap_sigma) < 0:
            raise ConfigError(
                f"persona {self.name!r}: pause_sigma, backchannel_rate, barge_in_min_s and "
                "gap_sigma cannot be negative"
            )
        if min(self.barge_in_beta) <= 0:
            raise ConfigError(f"persona {self.name!r}: barge_in_beta parameters must be positive")


PERSONAS: dict[str, Persona] = {
    # Direct and efficient: short medium pauses now and then, the occasional "mm-hm", and
    # very rarely a cut-in near the end of a long answer (anticipating where it goes).
    "default": Persona("default", "You are direct and efficient and speak without disfluencies."),
    "aggressive_impatient": Persona(
        "aggressive_impatient",
        "You are impatient and irritable. You speak fast, cut the agent off when it talks for "
        "long, and say so when progress stalls. You still give correct information when asked.",
        speech_rate=1.25,
        fillers=("Look,", "Come on,"),
        pause_rate=0.02,
        pause_median_s=0.35,
        pause_sigma=0.3,
        backchannel_rate=0.02,
        # Half of the answers of 3 s or more get cut, typically 30-60 % of the way in.
        barge_in_rate=0.5,
        barge_in_min_s=3.0,
        barge_in_beta=(2.0, 3.0),
        gap_median_s=0.15,
    ),
    "elderly_slow": Persona(
        "elderly_slow",
        "You are an elderly caller. You speak slowly with deliberate pauses (write them as "
        "'...') and sometimes ask the agent to repeat itself.",
        speech_rate=0.75,
        fillers=("Well...", "Let me see..."),
        voice="male,senior",
        pause_rate=0.35,
        pause_median_s=1.1,
        pause_sigma=0.35,
        number_pause_rate=0.2,
        number_pause_median_s=1.3,
        backchannel_rate=0.15,  # one every ~7 s: an attentive, polite listener
        barge_in_rate=0.0,
        gap_median_s=0.6,  # slower on purpose: outside the human mean range
    ),
    "forgetful_disorganized": Persona(
        "forgetful_disorganized",
        "You are disorganised and forgetful. You hesitate ('um', 'uh'), lose your train of "
        "thought, and need a moment to find codes and numbers in the middle of a sentence "
        "(write pauses as '...'). The values you finally give are always correct.",
        speech_rate=0.95,
        fillers=("Um...", "Uh, hold on..."),
        pause_rate=0.2,
        pause_median_s=0.8,
        pause_sigma=0.5,
        number_pause_rate=0.7,
        number_pause_median_s=1.8,
        backchannel_rate=0.06,
        # "Oh wait, ..." in the middle of an answer now and then.
        barge_in_rate=0.08,
        barge_in_min_s=5.0,
        barge_in_beta=(3.0, 3.0),
        interruption_content_rate=0.7,
        slip_rate=0.3,  # gives a wrong digit now and then, and corrects it
        gap_median_s=0.35,
        gap_sigma=0.6,
    ),
}

# Short listener feedback per language (base language code). Non-lexical "mhm" is understood
# across languages, so it is the fallback for a language without a list. It is spelled "mhm":
# Piper cannot say "mm-hm" (it comes out as syllables an ASR writes as words, "in the magen"),
# which a listening agent would then take for an interruption.
BACKCHANNELS: dict[str, tuple[str, ...]] = {
    "en": ("mhm", "uh-huh", "right", "okay", "yeah"),
    "es": ("ajá", "sí", "vale", "claro", "mhm"),
}
NEUTRAL_BACKCHANNEL = "mhm"


def backchannel_phrases(language: str) -> tuple[str, ...]:
    """The backchannels of ``language`` (region ignored), else the neutral one."""
    return BACKCHANNELS.get(base_language(language), (NEUTRAL_BACKCHANNEL,))


def response_gap(persona: Persona, rng: np.random.Generator) -> float:
    """A drawn silence (s) before the caller answers (log-normal, clipped to GAP_RANGE_S)."""
    gap = float(rng.lognormal(np.log(persona.gap_median_s), persona.gap_sigma))
    return min(max(gap, GAP_RANGE_S[0]), GAP_RANGE_S[1])


def get_persona(name: str | None) -> Persona:
    if not name:
        return PERSONAS["default"]
    if name not in PERSONAS:
        raise ConfigError(f"unknown caller persona {name!r}; known: {', '.join(sorted(PERSONAS))}")
    return PERSONAS[name]
