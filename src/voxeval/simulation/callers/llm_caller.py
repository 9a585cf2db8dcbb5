"""An LLM user simulator: plays the caller of a scenario through any chat LLM.

The system prompt (our wording) gives the model its goal, decision rules, persona, the facts it
may disclose and the current date; the model hangs up by calling the ``end_call`` tool. It
opens with the scenario's exact starting utterance. In audio mode it hears the agent through
an ASR provider; the engine speaks its lines with the caller's TTS voice."""

from __future__ import annotations

import json
from typing import Any, ClassVar

import numpy as np

from voxeval.audio import Audio
from voxeval.benchmarks.eva.scenario import Scenario
from voxeval.errors import ConfigError, HarnessFault
from voxeval.json_types import JSONReadObject
from voxeval.providers.asr.spoken_language import base_language, language_name
from voxeval.providers.base import ASR, LLM, Message
from voxeval.simulation.behaviour_choice import build_behaviour, resolve_kind
from voxeval.simulation.caller_behaviour import CallerBehaviour
from voxeval.simulation.callers.caller_phrases import ENGLISH, PHRASES
from voxeval.simulation.parties import CALLERS, CallerBase, CallerTurn
from voxeval.simulation.personas import Persona, get_persona

# How often one turn is asked when the model answers with nothing (and does not hang up).
EMPTY_ANSWER_TRIES = 3
_RETRY_SEED_STEP = 100_003  # retry seeds stay clear of the next turns' seeds

END_CALL_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "end_call",
        "description": (
            "Hang up. Use it only once your goal is resolved and the agent has confirmed that "
            "nothing is left to do, or once it is clear the goal cannot be reached."
        ),
        "parameters": {
            "type": "object",
            "properties": {"reason": {"type": "string"}},
            "additionalProperties": False,
        },
    },
}


def _bullets(items: list[str]) -> str:
    return "\n".join(f"- {item}" for item in items) if items else "- (none)"


def _other_details(goal: JSONReadObject, tree: JSONReadObject) -> str:
    """The goal's keys beyond the known ones (imported records carry some), so the caller
    follows them too; empty when there are none, so other prompts stay as they were."""
    items = {**{f"decision_tree.{k}": v for k, v in tree.items()}, **goal}
    if not items:
        return ""
    lines = [f"- {k}: {v if isinstance(v, str) else json.dumps(v)}" for k, v in items.items()]
    return "Other details of your goal:\n" + "\n".join(lines) + "\n"


def caller_prompt(scenario: Scenario, persona: Persona) -> str:
    goal = scenario.user_goal
    tree = goal.decision_tree
    info = "\n".join(f"- {k}: {v}" for k, v in goal.information_required.items()) or "- (none)"
    return f"""You are role-playing a person who phones a company's voice agent. Stay in role for
the whole call: you are the caller, never the agent, and you never mention being an AI.

Today is {scenario.current_date_time}.

Who you are: {scenario.user_persona}
How you speak: {persona.prompt}

What you want: {goal.high_level_user_goal}

Rules that decide your choices (follow them exactly; they make the outcome repeatable):
Non-negotiable requirements:
{_bullets(tree.must_have_criteria)}
Preferences you may give up:
{_bullets(tree.nice_to_have_criteria)}
How to react to options the agent offers:
{_bullets(tree.negotiation_behavior)}
Success means: {tree.resolution_condition or "your goal is done and confirmed by the agent."}
Failure means: {tree.failure_condition or "the agent cannot do what you need."}
Transfers to a human: {tree.escalation_behavior or "do not ask for one."}
Special situations:
{_bullets(tree.edge_cases)}
{_other_details(goal.extra_details(), tree.extra_details())}
Facts you know. Give one only when the agent asks for it, exactly as written, and say codes,
numbers and dates clearly (spell codes character by character if the agent mishears them):
{info}

How to behave on the call:
- Speak in short, natural spoken sentences: no lists, no markdown, no stage directions.
- Do not ask for anything beyond your goal; decline extra changes or offers that are not part
  of it.
- Never repeat a request the agent has already completed.
- Do not hang up in the same turn in which you give the agent information it still has to act
  on; wait until it confirms.
- When your goal is resolved (or clearly cannot be), and the agent has confirmed nothing is
  left, say a short goodbye and call the end_call tool.
{language_rule(scenario.language)}"""


def language_rule(language: str) -> str:
    """The prompt line that keeps the caller in the call's language (empty for English)."""
    if base_language(language) == "en":
        return ""
    name = language_name(language)
    return (
        f"- Speak only {name} for the whole call, even if the agent answers in another "
        f"language; the facts above stay exactly as written.\n"
    )


# What the model is told when it cuts in (appended to what it heard of the agent so far).
INTERRUPT_CONTENT = (
    "(You cut in now, while the agent is still talking. In one short sentence say what "
    "cannot wait: correct something you said earlier that was wrong, give a detail the agent "
    "will need, or ask an urgent question about your goal.)"
)
INTERRUPT_BRIEF = "(You cut in now, while the agent is still talking; keep it short.)"


@CALLERS.register("llm")
class LLMCaller(CallerBase):
    name = "llm"
    needs_llm = True
    # simulation.behaviour it supports; first: default
    behaviour_kinds: ClassVar[tuple[str, ...]] = ("llm", "rules", "none")
    persona: Persona
    behaviour: CallerBehaviour
    behaviour_kind: str

    def __init__(
        self,
        *,
        llm: LLM,
        asr: ASR | None = None,
        persona: str | Persona | None = None,
        temperature: float = 0.0,
        max_turns: int = 40,
        seed: int = 0,
        behaviour_kind: str = "auto",
    ) -> None:
        self.llm = llm
        self.asr = asr
        self.persona = persona if isinstance(persona, Persona) else get_persona(persona)
        self.speech_rate = self.persona.speech_rate
        self.temperature = temperature
        self.max_turns = max_turns
        self.seed = seed  # each turn samples with seed + turn number: same call, same words
        self.messages: list[Message] = []
        self._turns = 0
        self._language = "en"
        self._phrases = ENGLISH
        self.behaviour_kind = resolve_kind(behaviour_kind, self.behaviour_kinds, self.name)
        self.behaviour = self._behaviour("en")
        self._interrupt_rng = np.random.default_rng([abs(seed), 0x17E])

    def _behaviour(self, language: str) -> CallerBehaviour:
        """Pauses, backchannels and barge-ins (``behaviour_choice``); an LLM behaviour sees
        this caller's conversation."""
        return build_behaviour(
            self.behaviour_kind,
            persona=self.persona,
            language=language,
            seed=self.seed,
            llm=self.llm,
            conversation=lambda: self.messages,
        )

    def start(self, scenario: Scenario) -> CallerTurn:
        opening = scenario.user_goal.starting_utterance
        self._language = scenario.language
        self._phrases = PHRASES.get(base_language(scenario.language), ENGLISH)
        self.messages = [
            {"role": "system", "content": caller_prompt(scenario, self.persona)},
            {"role": "user", "content": "(the call connects)"},
            {"role": "assistant", "content": opening},
        ]
        self._turns = 0
        self.behaviour = self._behaviour(scenario.language)  # fresh draws for each call
        self._interrupt_rng = np.random.default_rng([abs(self.seed), 0x17E])
        return CallerTurn(text=opening)

    def respond(
        self, agent_audio: Audio | None, agent_text: str | None, note: str = ""
    ) -> CallerTurn:
        if not self.messages:
            raise ConfigError("llm caller: respond() called before start()")
        heard = agent_text or ""
        if agent_audio is not None:
            if self.asr is None:
                raise ConfigError("llm caller: audio mode needs an ASR (simulation.caller_asr)")
            heard = self.asr.transcribe(agent_audio, language=self._language).text
        self._turns += 1
        said = heard or "(silence)"
        self.messages.append({"role": "user", "content": f"{said}\n{note}" if note else said})
        if self._turns > self.max_turns:
            return CallerTurn(text=self._phrases.give_up, end_call=True, heard=heard)
        text, ends = self._answer()
        self.messages.append({"role": "assistant", "content": text})
        return CallerTurn(text=text, end_call=ends, heard=heard, compute_s=0.0)

    def interrupt(self, agent_audio: Audio | None, agent_text: str | None) -> CallerTurn:
        """The caller cuts in while the agent still talks (its behaviour chose the moment).
        As often as the persona's ``interruption_content_rate`` the model is told to say
        something that matters now (a correction, a detail the agent will need, an urgent
        question about its goal); otherwise to cut in briefly as the persona would."""
        content = bool(self._interrupt_rng.random() < self.persona.interruption_content_rate)
        turn = self.respond(
            agent_audio, agent_text, note=INTERRUPT_CONTENT if content else INTERRUPT_BRIEF
        )
        return turn

    def _answer(self) -> tuple[str, bool]:
        """The model's next line and whether it hangs up. An empty line that hangs up gets
        the usual short goodbye; an empty line that does not is the simulator failing (a
        stand-in phrase would put words in the caller's mouth that change the call): it is
        asked again with other seeds, then the call fails on our side."""
        for attempt in range(EMPTY_ANSWER_TRIES):
            response = self.llm.chat(
                self.messages,
                tools=[END_CALL_TOOL],
                temperature=self.temperature,
                # a distinct seed per try: a cached empty answer must not come back
                seed=self.seed + self._turns + _RETRY_SEED_STEP * attempt,
            )
            ends = any(call.name == "end_call" for call in response.tool_calls)
            text = response.text.strip()
            if ends:
                return text or self._phrases.hang_up, True
            if text:
                return text, False
        raise HarnessFault(
            f"llm caller: the model gave an empty answer without ending the call "
            f"{EMPTY_ANSWER_TRIES} times (turn {self._turns})",
            component="simulator",
        )


def transcript_json(messages: list[Message]) -> str:
    """The conversation as the caller saw it (for debugging and reports)."""
    return json.dumps([m for m in messages if m.get("role") != "system"], indent=1)
