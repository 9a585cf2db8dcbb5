"""A caller that needs no LLM: deterministic answers from the scenario's information fields.

It opens with the scenario's starting utterance, then for each agent turn:
1. hangs up when the agent says goodbye or asks whether there is anything else — unless some
   information fields were never asked for, which means part of the goal is still open: then
   it raises the next follow-up request of its decision tree ("Ask about your balance after
   ..." becomes "I'd also like to ask about my balance");
2. gives every information field the agent asks for, matched by the words of the field's
   label (with a few synonyms and fuzzy matching for transcription errors);
3. answers a yes/no question with yes — unless the offer matches a decision-tree rule that says
   to decline it — and a which/when question with the must-have (else nice-to-have) criterion
   closest to the question;
4. otherwise restates its goal when asked how it can be helped, or acknowledges.
A fact that a decision-tree rule says never to give ("Never give your member ID") is refused
when asked (``withheld_labels``).
When it cuts into the agent (``interrupt``, a barge-in of its behaviour) it says a correction,
a key fact not asked for yet or an urgent question from its goal (``callers.interruptions``,
as often as the persona says), else the usual answer to what it heard.
In audio mode it hears the agent through an ASR provider. It speaks the scenario's language:
its fixed lines and the cues it listens for come from ``caller_phrases`` (English, Spanish);
lines quoted from the scenario are spoken as written."""

from __future__ import annotations

import re
from typing import ClassVar

from rapidfuzz import fuzz

from voxeval.audio import Audio
from voxeval.benchmarks.eva.scenario import Scenario
from voxeval.errors import ConfigError
from voxeval.providers.base import ASR
from voxeval.simulation.behaviour_choice import build_behaviour, resolve_kind
from voxeval.simulation.caller_behaviour import CallerBehaviour
from voxeval.simulation.callers.caller_phrases import (
    ENGLISH,
    PHRASES,
    CallerPhrases,
    phrases_for,
)
from voxeval.simulation.callers.interruptions import CorrectingBehaviour, InterruptionPlanner
from voxeval.simulation.parties import CALLERS, CallerBase, CallerTurn
from voxeval.simulation.personas import Persona, get_persona

SYNONYMS: dict[str, tuple[str, ...]] = {
    "birth": ("birthday", "born", "dob"),
    "dob": ("birth", "birthday", "born"),
    "id": ("identifier", "number"),
    "phone": ("telephone", "callback", "number"),
    "email": ("e-mail", "mail"),
    "zip": ("postal", "postcode"),
    "surname": ("last", "family"),
    "reference": ("confirmation", "booking", "code"),
}
OPTIONAL_WORDS = {"full", "number", "no", "the", "of", "your", "my", "a", "an", "and"}
DECLINE_WORDS = re.compile(
    r"\b(decline|refuse|reject|do not accept|don't accept|not interested"
    r"|say no|won't accept|will not accept|turn down)\b",
    re.I,
)
WORD = re.compile(r"[^\W_]+")  # letters (accented too) and digits
FOLLOW_UP = re.compile(
    r"^\s*(?:then |also )?(ask|request|mention|say)\b(.*?)(?:\s+(?:after|once|when)\b.*)?\.?\s*$",
    re.I,
)
PRONOUNS = {"your": "my", "you": "I", "yours": "mine", "yourself": "myself"}
# a decision-tree rule that keeps a fact back: "Never give your member ID, even if asked."
WITHHOLD = re.compile(
    r"^\s*(?:never|do not|don't|refuse to)\s+(?:give|share|tell|say|disclose|provide)\s+"
    r"(?:the agent\s+)?your\s+(.+)$",
    re.I,
)


def withheld_labels(rules: list[str], labels: list[str]) -> set[str]:
    """Labels of the facts a decision-tree rule tells the caller never to give."""
    kept: set[str] = set()
    for rule in rules:
        m = WITHHOLD.match(rule)
        if m is None:
            continue
        said = " ".join(_words(m.group(1)))
        kept |= {label for label in labels if said.startswith(" ".join(_words(label)))}
    return kept


def first_person(text: str) -> str:
    return re.sub(
        r"\b(your|you|yours|yourself)\b", lambda m: PRONOUNS[m.group(1).lower()], text, flags=re.I
    )


def follow_ups(rules: list[str], phrases: CallerPhrases = ENGLISH) -> list[str]:
    """Requests a caller raises later in the call, from decision-tree lines like
    "Ask about your balance after the address is done"."""
    out = []
    for rule in rules:
        m = FOLLOW_UP.match(rule)
        if m and m.group(2).strip():
            request = f"{m.group(1).lower()}{first_person(m.group(2))}"
            out.append(phrases.follow_up.format(request=request))
    return out


def _words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def _has_word(word: str, heard: list[str]) -> bool:
    options = (word, *SYNONYMS.get(word, ()))
    return any(fuzz.ratio(o, h) >= 85 for o in options for h in heard)


def label_asked(label: str, heard: list[str], phrases: CallerPhrases = ENGLISH) -> bool:
    """True when every content word of the field label (or a synonym) was heard, or a word
    the language's phrases give as an alias of the label."""
    phrase = " ".join(_words(label.replace("_", " ")))
    for key, aliases in {**ENGLISH.label_aliases, **phrases.label_aliases}.items():
        if key in phrase and any(fuzz.ratio(a, h) >= 85 for a in aliases for h in heard):
            return True
    needed = [w for w in _words(label.replace("_", " ")) if w not in OPTIONAL_WORDS]
    if not needed:
        needed = _words(label.replace("_", " "))
    return bool(needed) and all(_has_word(w, heard) for w in needed)


@CALLERS.register("scripted")
class ScriptedCaller(CallerBase):
    name = "scripted"
    speaks: ClassVar[tuple[str, ...]] = tuple(PHRASES)  # the languages it has lines and cues for
    # simulation.behaviour it supports; first: default
    behaviour_kinds: ClassVar[tuple[str, ...]] = ("rules", "none")
    persona: Persona
    behaviour: CallerBehaviour
    behaviour_kind: str

    def __init__(
        self,
        *,
        asr: ASR | None = None,
        persona: str | Persona | None = None,
        max_turns: int = 40,
        seed: int = 0,
        behaviour_kind: str = "auto",
    ) -> None:
        self.asr = asr
        self.persona = persona if isinstance(persona, Persona) else get_persona(persona)
        self.speech_rate = self.persona.speech_rate
        self.max_turns = max_turns
        self.seed = seed  # seeds the behaviour (pauses, backchannels, barge-ins)
        self.behaviour_kind = resolve_kind(behaviour_kind, self.behaviour_kinds, self.name)
        self.behaviour = self._behaviour("en")
        self._scenario: Scenario | None = None
        self._turns = 0
        self._given: set[str] = set()
        self._withheld: set[str] = set()  # facts a rule says never to give
        self._follow_ups: list[str] = []
        self._phrases = ENGLISH
        self.interruptions = InterruptionPlanner(self.persona, seed)

    def start(self, scenario: Scenario) -> CallerTurn:
        self._scenario = scenario
        self._phrases = phrases_for(scenario.language)
        self._turns = 0
        self._given = set()
        rules = scenario.user_goal.decision_tree.negotiation_behavior
        self._follow_ups = follow_ups(rules, self._phrases)
        tree = scenario.user_goal.decision_tree
        self._withheld = withheld_labels(
            [*tree.negotiation_behavior, *tree.edge_cases],
            list(scenario.user_goal.information_required),
        )
        self.behaviour = self._behaviour(scenario.language)  # fresh draws for each call
        self.interruptions = InterruptionPlanner(self.persona, self.seed)
        self.interruptions.start(scenario)
        return CallerTurn(text=scenario.user_goal.starting_utterance)

    def _behaviour(self, language: str) -> CallerBehaviour:
        inner = build_behaviour(
            self.behaviour_kind, persona=self.persona, language=language, seed=self.seed
        )
        if self.behaviour_kind == "none":  # no barge-ins at all
            return inner
        return CorrectingBehaviour(inner, self.persona, self._correction_pending)

    def _correction_pending(self) -> bool:
        return self.interruptions.pending is not None

    def respond(self, agent_audio: Audio | None, agent_text: str | None) -> CallerTurn:
        heard = self._hear(agent_audio, agent_text)
        self._turns += 1
        # a slip of an earlier turn that no barge-in corrected yet: corrected now
        earlier = self.interruptions.take_correction()
        text, end = self._reply(heard)
        if earlier is not None and not end and earlier.value not in text:
            text = f"{self._correction_line(earlier.label, earlier.value)} {text}"
        return CallerTurn(text=text, end_call=end, heard=heard)

    def interrupt(self, agent_audio: Audio | None, agent_text: str | None) -> CallerTurn:
        """What the caller says when it cuts in, having heard ``agent_text`` so far: a pending
        correction; else, as often as the persona says, a key fact the agent has not asked
        for or an urgent question from a must-have criterion; else the usual answer."""
        heard = self._hear(agent_audio, agent_text)
        correction = self.interruptions.take_correction()
        content = self.interruptions.carries_content()  # one draw per barge-in, always
        if correction is not None:
            text = self._correction_line(correction.label, correction.value)
        elif content:
            text = self._new_information() or self._urgent_question() or ""
        else:
            text = ""
        if not text:
            return self.respond(agent_audio=None, agent_text=heard)
        self._turns += 1
        return CallerTurn(text=self._style(text), heard=heard)

    def _hear(self, agent_audio: Audio | None, agent_text: str | None) -> str:
        if self._scenario is None:
            raise ConfigError("scripted caller: respond() called before start()")
        heard = agent_text or ""
        if agent_audio is not None and self.asr is not None:
            heard = self.asr.transcribe(agent_audio, language=self._scenario.language).text
        elif agent_audio is not None and not heard:
            raise ConfigError("scripted caller: audio mode needs an ASR to hear the agent")
        return str(heard)

    def _correction_line(self, label: str, value: str) -> str:
        self._given.add(label)
        return self._phrases.correction.format(label=label.replace("_", " "), value=value)

    def _new_information(self) -> str | None:
        """A key fact the agent has not asked for yet, volunteered."""
        assert self._scenario is not None
        entities = self._scenario.entities
        label = self.interruptions.pick(
            [k for k in entities if k not in self._given and k not in self._withheld]
        )
        if label is None:
            return None
        self._given.add(label)
        value = self.interruptions.value_to_say(label, entities[label])
        return self._phrases.new_information.format(label=label.replace("_", " "), value=value)

    def _urgent_question(self) -> str | None:
        """A must-have criterion of the goal, asked to be made sure of."""
        assert self._scenario is not None
        criteria = list(self._scenario.user_goal.decision_tree.must_have_criteria)
        wish = self.interruptions.pick(criteria)
        if wish is None:
            return None
        return self._phrases.urgent_question.format(wish=first_person(wish).rstrip(". "))

    def _reply(self, heard: str) -> tuple[str, bool]:
        assert self._scenario is not None
        goal = self._scenario.user_goal
        say = self._phrases
        if self._turns > self.max_turns:
            return say.give_up, True
        if say.goodbye_cue.search(heard):
            return say.goodbye, True
        if say.anything_else_cue.search(heard):
            open_fields = set(goal.information_required) - self._given
            if open_fields and self._follow_ups:
                return self._follow_ups.pop(0), False
            return say.nothing_else, True
        words = _words(heard)
        asked = [label for label in goal.information_required if label_asked(label, words, say)]
        refused = [label for label in asked if label in self._withheld]
        asked = [label for label in asked if label not in self._withheld]
        if refused and not asked:
            return self._style(say.withhold.format(label=refused[0].replace("_", " "))), False
        self._given.update(asked)
        answers = [
            say.answer_item.format(
                label=label.replace("_", " "),
                value=self.interruptions.value_to_say(label, str(goal.information_required[label])),
            )
            for label in asked
        ]
        if answers:
            text = say.answer_intro + say.answer_joiner.join(answers) + "."
            if refused:
                text += " " + say.withhold.format(label=refused[0].replace("_", " "))
            return self._style(text), False
        if say.choice_cue.search(heard):
            wish = self._closest_criterion(heard)
            if wish:
                return self._style(say.choice.format(wish=wish)), False
        if say.yes_no_cue.search(heard) or heard.rstrip().endswith("?"):
            if self._should_decline(heard):
                return self._style(say.decline), False
            if say.yes_no_cue.search(heard):
                return self._style(say.accept), False
        if say.help_cue.search(heard):
            return self._style(goal.starting_utterance), False
        return self._style(say.acknowledge), False

    def _closest_criterion(self, heard: str) -> str:
        assert self._scenario is not None
        tree = self._scenario.user_goal.decision_tree
        options = tree.must_have_criteria or tree.nice_to_have_criteria
        if not options:
            return ""
        scores = [fuzz.token_set_ratio(o.lower(), heard.lower()) for o in options]
        return first_person(options[scores.index(max(scores))])

    def _should_decline(self, heard: str) -> bool:
        assert self._scenario is not None
        tree = self._scenario.user_goal.decision_tree
        rules = [*tree.must_have_criteria, *tree.negotiation_behavior, *tree.edge_cases]
        for rule in rules:
            if DECLINE_WORDS.search(rule):
                subject = DECLINE_WORDS.sub(" ", rule)
                if fuzz.token_set_ratio(subject.lower(), heard.lower()) >= 60:
                    return True
        return False

    def _style(self, text: str) -> str:
        persona = self.persona
        if persona.fillers:
            text = f"{persona.fillers[self._turns % len(persona.fillers)]} {text}"
        return text
