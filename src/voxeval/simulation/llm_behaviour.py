"""Caller behaviour decided by the caller's own LLM, with the persona's rules as the fallback.

For each agent utterance long enough to react to (``min_utterance_s``, default 2 s; shorter
ones get the rule plan without a call), one extra chat call asks the LLM, in role, after which
of the agent's numbered words it would give short listener feedback and after which word, if
any, it would cut in. The answer is JSON validated against ``DECISION_SCHEMA``; a malformed
answer, or one naming a word the utterance does not have, is retried with a note saying what
was wrong, until ``max_attempts`` answers (default 3) have been spent on the decision. A
provider's own JSON retries count towards that budget, so the two retry loops do not
multiply. When no answer is usable the plan comes from the persona's ``RuleBehaviour``;
``stats`` counts decisions, calls, parse failures and fallbacks.

Word positions become seconds in proportion to the word count: after word ``n`` of ``m`` is
``n / m`` of the utterance's duration. That is the engine's text-mode timing (a constant word
rate) and how the engine cuts what a caller heard at a barge-in (``words_spoken``), so a
caller that cuts in after word ``n`` has heard exactly ``n`` words. Backchannels keep the same
edges as the rules (none in the first or last 0.5 s, none after the barge-in); a barge-in after
the last word is no barge-in.

Speaking plans are the rule behaviour's: the LLM's own "..." markers always pause, and the
persona's drawn pauses are added at clause boundaries and before codes.

The decision calls are attributed to the caller in the unit's usage ledger.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, TypedDict

from voxeval.errors import LLMOutputError
from voxeval.providers.base import LLM, Message
from voxeval.providers.llm.llm_output import extract_json, schema_problem, schema_validator
from voxeval.providers.usage.usage_ledger import attributed
from voxeval.simulation.caller_behaviour import (
    PAUSE_MARKER,
    Backchannel,
    BargeIn,
    CallerBehaviourBase,
    ListeningPlan,
    SpeakingPlan,
)
from voxeval.simulation.rule_behaviour import BACKCHANNEL_EDGE_S, RuleBehaviour

DECISION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "backchannel_after_words": {
            "type": "array",
            "items": {"type": "integer", "minimum": 1},
            "maxItems": 20,
        },
        "barge_in_after_word": {"type": ["integer", "null"], "minimum": 1},
    },
    "required": ["backchannel_after_words", "barge_in_after_word"],
    "additionalProperties": False,
}

# Turns of the conversation shown to the LLM (the most recent ones): enough for context,
# bounded so that the extra call stays cheap in long calls.
CONTEXT_MESSAGES = 12

# The decision prompt's first words (loopback tests that script the caller's LLM look for them).
DECISION_PROMPT_OPENING = "You play a caller"
_SYSTEM = (
    DECISION_PROMPT_OPENING
    + """ on a phone call with a company's voice agent. You are now \
listening to the agent speak, and you decide how you react while it talks.

Your persona: {persona}

You may give short listener feedback such as "{example}" while the agent talks, after some of \
its words, as people do on the phone to show they follow; and you may cut the agent off after \
one of its words if, in your persona, you would not wait for it to finish (for example you \
already know what it will say, it is going on too long, or it got something wrong). Most \
callers let the agent finish most of the time.

Answer with JSON only: {{"backchannel_after_words": [word numbers], \
"barge_in_after_word": a word number or null}}. Word numbers refer to the numbered words of \
the agent's utterance; use [] and null when you would just listen."""
)

_USER = """The conversation so far (you are "caller"):
{conversation}

The agent now says ({count} words):
{numbered}

How do you react while it speaks?"""

_RETRY_NOTE = "That answer could not be used: {problem}. Answer again with only the JSON."


@dataclass
class BehaviourStats:
    """What the LLM behaviour cost and how reliable it was, for the caller's report."""

    decisions: int = 0  # agent utterances decided by the LLM (calls made)
    skipped: int = 0  # utterances too short to ask about: rule plan, no call
    llm_calls: int = 0  # chat calls, retries included
    parse_failures: int = 0  # answers that were not valid JSON or broke the schema/range
    fallbacks: int = 0  # decisions where every attempt failed: the rule plan was used

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def agent_words(text: str) -> list[str]:
    """The words of an agent utterance as the decision prompt numbers them."""
    return PAUSE_MARKER.sub(" ", text).split()


def after_word_s(n: int, word_count: int, duration_s: float) -> float:
    """Seconds from the onset at which word ``n`` (1-based) of ``word_count`` ends."""
    return round(duration_s * n / word_count, 3)


class LLMBehaviour(CallerBehaviourBase):
    """Listening plans from the caller's LLM, speaking plans and fallbacks from ``rules``.

    ``conversation`` returns the caller's chat history (system message ignored) at the moment
    of the decision; ``seed`` seeds the decision calls (a distinct seed per call and attempt,
    so a cached malformed answer never comes back).
    """

    stats: BehaviourStats  # its counts, kept in call.json

    def __init__(
        self,
        llm: LLM,
        rules: RuleBehaviour,
        *,
        conversation: Callable[[], Sequence[Message]] = list,
        seed: int = 0,
        temperature: float = 0.0,
        max_attempts: int = 3,
        min_utterance_s: float = 2.0,
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.llm = llm
        self.rules = rules
        self.conversation = conversation
        self.seed = int(seed)
        self.temperature = temperature
        self.max_attempts = max_attempts
        self.min_utterance_s = min_utterance_s
        self.stats = BehaviourStats()

    def speaking_plan(self, text: str) -> SpeakingPlan:
        return self.rules.speaking_plan(text)

    def listening_plan(self, agent_text: str, agent_duration_s: float) -> ListeningPlan:
        words = agent_words(agent_text)
        if agent_duration_s < self.min_utterance_s or len(words) < 2:
            self.stats.skipped += 1  # not worth a call: the rules decide, for free
            return self.rules.listening_plan(agent_text, agent_duration_s)
        self.stats.decisions += 1
        decision = self._decide(words)
        if decision is None:
            self.stats.fallbacks += 1
            return self.rules.listening_plan(agent_text, agent_duration_s)
        backchannel_after, barge_after = decision
        return self._plan(backchannel_after, barge_after, len(words), agent_duration_s)

    # ------------------------------------------------------------------ the call
    def _messages(self, words: list[str]) -> list[Message]:
        history = [m for m in self.conversation() if m.get("role") != "system"]
        lines = []
        for message in history[-CONTEXT_MESSAGES:]:
            content = message.get("content")
            if isinstance(content, str) and content.strip():
                who = "caller" if message.get("role") == "assistant" else "agent"
                lines.append(f"{who}: {content.strip()}")
        system = _SYSTEM.format(persona=self.rules.persona.prompt, example=self.rules.phrases[0])
        user = _USER.format(
            conversation="\n".join(lines) or "(nothing yet)",
            count=len(words),
            numbered=" ".join(f"[{i}] {w}" for i, w in enumerate(words, 1)),
        )
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def _decide(self, words: list[str]) -> tuple[list[int], int | None] | None:
        """(backchannel word numbers, barge-in word number) or None when no attempt worked."""
        messages = self._messages(words)
        validator = schema_validator(DECISION_SCHEMA)
        call_seed = self.seed + 1000 * self.stats.decisions
        problem: str | None = None
        used = 0  # model answers spent on this decision, the provider's own retries included
        while used < self.max_attempts:
            with attributed("caller") as usage:
                try:
                    response = self.llm.chat(
                        messages,
                        response_schema=DECISION_SCHEMA,
                        temperature=self.temperature,
                        seed=call_seed + used,
                    )
                except LLMOutputError as exc:
                    # The provider checked the JSON itself (and may have retried): each of its
                    # attempts failed. Its tokens are not reported for a failed call.
                    used += max(1, exc.attempts)
                    self.stats.llm_calls += max(1, exc.attempts)
                    self.stats.parse_failures += max(1, exc.attempts)
                    problem = str(exc).rpartition("last problem: ")[2]
                    messages = _with_note(messages, exc.raw_text, problem)
                    continue
                usage.add_tokens(response.usage)
            used += 1
            self.stats.llm_calls += 1
            value = response.parsed
            problem = None
            if value is None:  # a provider that does not parse structured output itself
                try:
                    value = extract_json(response.text)
                except ValueError as exc:
                    problem = str(exc)
            if problem is None:
                problem = schema_problem(value, validator) or _range_problem(value, len(words))
            if problem is None:
                return list(value["backchannel_after_words"]), value["barge_in_after_word"]
            self.stats.parse_failures += 1
            messages = _with_note(messages, response.text, problem)
        return None

    def _plan(
        self, backchannel_after: list[int], barge_after: int | None, count: int, duration_s: float
    ) -> ListeningPlan:
        barge = None
        if barge_after is not None and barge_after < count:
            barge = BargeIn(after_word_s(barge_after, count, duration_s))
        limit = duration_s - BACKCHANNEL_EDGE_S
        if barge is not None:
            limit = min(limit, barge.at_s - BACKCHANNEL_EDGE_S)
        times = sorted({after_word_s(n, count, duration_s) for n in backchannel_after})
        kept = [t for t in times if BACKCHANNEL_EDGE_S <= t <= limit]
        phrases = self.rules.phrases
        # The phrase rotates through the language's list: varied, and free of draws.
        start = self.stats.decisions
        backchannels = tuple(
            Backchannel(t, phrases[(start + i) % len(phrases)]) for i, t in enumerate(kept)
        )
        return ListeningPlan(backchannels, barge)


def _with_note(messages: list[Message], answer: str, problem: str) -> list[Message]:
    """The decision prompt, the rejected answer and what was wrong with it."""
    return [
        *messages[:2],
        {"role": "assistant", "content": answer},
        {"role": "user", "content": _RETRY_NOTE.format(problem=problem)},
    ]


class _Decision(TypedDict):
    """A decision that passed ``DECISION_SCHEMA``."""

    backchannel_after_words: list[int]
    barge_in_after_word: int | None


def _range_problem(value: _Decision, count: int) -> str | None:
    numbers = [*value["backchannel_after_words"]]
    if value["barge_in_after_word"] is not None:
        numbers.append(value["barge_in_after_word"])
    wrong = [n for n in numbers if n > count]
    if wrong:
        return f"the utterance has {count} words, so word number(s) {wrong} do not exist"
    return None
