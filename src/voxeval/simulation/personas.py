"""Behavioural caller personas (EVA's behavioural perturbation axis).

Each persona changes what the caller says (LLM prompt text, scripted-caller style), how fast it
speaks (``speech_rate``: 1 = normal) and whether it talks over the agent
(``barge_in_after_s``: cut in after that much uninterrupted agent speech); a persona may also
bring its own voice (an accent perturbation still takes precedence)."""

from __future__ import annotations

from dataclasses import dataclass

from voxeval.errors import ConfigError


@dataclass(frozen=True)
class Persona:
    name: str
    prompt: str  # added to the LLM caller's instructions
    speech_rate: float = 1.0
    barge_in_after_s: float | None = None
    pauses: bool = False  # scripted caller inserts long pauses (...) inside answers
    fillers: tuple[str, ...] = ()  # scripted caller opens answers with these
    voice: str | None = None  # speaker profile that replaces the caller voice (accent wins)


PERSONAS: dict[str, Persona] = {
    "default": Persona("default", "You are direct and efficient and speak without disfluencies."),
    "aggressive_impatient": Persona(
        "aggressive_impatient",
        "You are impatient and irritable. You speak fast, cut the agent off when it talks for "
        "long, and say so when progress stalls. You still give correct information when asked.",
        speech_rate=1.25,
        barge_in_after_s=4.0,
        fillers=("Look,", "Come on,"),
    ),
    "elderly_slow": Persona(
        "elderly_slow",
        "You are an elderly caller. You speak slowly with deliberate pauses (write them as "
        "'...') and sometimes ask the agent to repeat itself.",
        speech_rate=0.75,
        pauses=True,
        fillers=("Well...", "Let me see..."),
        voice="male,senior",
    ),
    "forgetful_disorganized": Persona(
        "forgetful_disorganized",
        "You are disorganised and forgetful. You hesitate ('um', 'uh'), lose your train of "
        "thought, and need a moment to find codes and numbers in the middle of a sentence "
        "(write pauses as '...'). The values you finally give are always correct.",
        speech_rate=0.95,
        pauses=True,
        fillers=("Um...", "Uh, hold on..."),
    ),
}


def get_persona(name: str | None) -> Persona:
    if not name:
        return PERSONAS["default"]
    if name not in PERSONAS:
        raise ConfigError(f"unknown caller persona {name!r}; known: {', '.join(sorted(PERSONAS))}")
    return PERSONAS[name]
