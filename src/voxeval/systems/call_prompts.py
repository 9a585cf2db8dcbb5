"""System prompts of the built-in agents (our wording): role, policy and voice style."""

from __future__ import annotations

from voxeval.benchmarks.eva.scenario import Scenario
from voxeval.providers.asr.spoken_language import base_language, language_name

VOICE_STYLE = """You are speaking on a phone call: everything you write is read aloud.
- Keep each turn short: one or two sentences, one question at a time.
- No markdown, lists, emojis or symbols; write numbers, codes and dates so they read aloud well.
- Read back codes, IDs and dates you were given before acting on them.
- Never invent tool parameters: ask the caller for anything you do not know.
- Use your tools to look things up and to make changes; never claim a change you did not make.
- Ask for the caller's confirmation before any change to their records."""

TRANSCRIPTION_NOTE = """The caller's words reach you through speech recognition and may contain
recognition errors. If something sounds garbled or implausible, ask the caller to repeat or
spell it instead of guessing."""


def language_addendum(language: str) -> str:
    """What the agent is told about the caller's language (empty for English)."""
    if base_language(language) == "en":
        return ""
    name = language_name(language)
    return (
        f"The caller speaks {name}. Hold the whole conversation in {name}: greet, ask and "
        f"confirm in {name}, even though these instructions are written in English. Keep names, "
        "codes and IDs exactly as they are."
    )


def agent_system_prompt(scenario: Scenario, *, hears_text: bool) -> str:
    agent = scenario.agent
    parts = [
        f"Your role: {agent.role}",
        f"Current date and time: {scenario.current_date_time}",
        "Policy and instructions you must follow:\n" + agent.instructions.strip(),
        VOICE_STYLE,
    ]
    if hears_text:
        parts.append(TRANSCRIPTION_NOTE)
    addendum = language_addendum(scenario.language)
    if addendum:
        parts.append(addendum)
    return "\n\n".join(parts)
