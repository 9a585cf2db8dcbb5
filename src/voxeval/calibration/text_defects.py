"""Defects injected into a correct call's timeline, each the kind of slip a real voice agent
(or simulated caller) makes, applied so the rest of the call stays consistent with it.

Each injector takes the clean call and a seeded generator and returns the edited timeline with
a description of the edit, or None when the scenario offers no place for that defect (e.g. no
verification step to skip)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TypeAlias

import numpy as np

from voxeval.calibration.clean_calls import CleanCall
from voxeval.calibration.timeline_edits import (
    drop_tools,
    end_with_caller,
    insert_exchange,
    remove_exchange,
    sentences,
    set_turn_text,
    turn_text,
)
from voxeval.json_types import JSONReadValue
from voxeval.simulation.timeline import Timeline, ToolEvent

# what a defect changed, as ``answers.jsonl`` lists it
DefectEdit: TypeAlias = dict[str, JSONReadValue]


@dataclass(frozen=True)
class Injected:
    timeline: Timeline
    edit: DefectEdit = field(default_factory=dict)


Injector = Callable[[CleanCall, np.random.Generator], Injected | None]


# ---------------------------------------------------------------- what the call holds


def _succeeded(event: ToolEvent) -> bool:
    status = event.result.get("status") if isinstance(event.result, dict) else None
    return event.valid and status != "error"


def _auth_events(timeline: Timeline) -> list[ToolEvent]:
    return [e for e in timeline.tools if e.kind == "auth"]


def _caller_texts(timeline: Timeline) -> list[str]:
    return [s.intended_text for s in timeline.speech("user")] + [
        s.transcript for s in timeline.speech("user") if s.transcript
    ]


def _agent_turns(timeline: Timeline) -> list[int]:
    return sorted({s.turn for s in timeline.speech("assistant") if s.intended_text.strip()})


def _leaves(value: JSONReadValue, key: str = "") -> Iterator[tuple[str, JSONReadValue]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, str(k))
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item, key)
    else:
        yield key, value


def _answer_phrase(label: str, value: JSONReadValue) -> str:
    # how the scripted caller gives one fact (caller_phrases.ENGLISH.answer_item)
    return f"my {label.replace('_', ' ')} is {value}"


def _without_phrase(text: str, phrase: str) -> str | None:
    for joined in (f", and {phrase}", f"{phrase}, and "):
        if joined in text:
            return text.replace(joined, "", 1)
    return None


# ---------------------------------------------------------------- faithfulness


def fabricated_tool_parameter(call: CleanCall, rng: np.random.Generator) -> Injected | None:
    """The caller never gave one of the values the agent passed to its verification tool:
    it is dropped from the caller's answer, the agent's tool call still carries it."""
    timeline = call.timeline
    auth = next((e for e in _auth_events(timeline) if _succeeded(e)), None)
    if auth is None:
        return None
    info = call.scenario.user_goal.information_required
    agent_text = " ".join(s.intended_text for s in timeline.speech("assistant"))
    earlier_results = [str(e.result) for e in timeline.tools if e.t < auth.t]
    candidates = []
    for arg, value in sorted(auth.arguments.items()):
        value_text = str(value)
        labels = [label for label, v in info.items() if str(v) == value_text]
        if not labels or value_text in agent_text or any(value_text in r for r in earlier_results):
            continue
        phrase = _answer_phrase(labels[0], value_text)
        turns = [s for s in timeline.speech("user") if value_text in s.intended_text]
        if len(turns) != 1 or turns[0].start > auth.t:
            continue
        edited = _without_phrase(turns[0].intended_text, phrase)
        if edited is not None:
            candidates.append((arg, value_text, labels[0], turns[0].turn, edited))
    if not candidates:
        return None
    arg, value, label, turn, edited = candidates[int(rng.integers(len(candidates)))]
    out = set_turn_text(timeline, "user", turn, edited)
    return Injected(
        out,
        {
            "tool": auth.name,
            "argument": arg,
            "fabricated_value": value,
            "caller_turn": turn,
            "withheld": label,
        },
    )


_CODE = re.compile(r"^(?=.*\d)[A-Z0-9][A-Z0-9-]{3,}$")


def _number_forms(value: float) -> list[str]:
    if float(value).is_integer():
        return [str(int(value))]
    return [f"{value:.2f}", f"{value:g}"]


def _mention_forms(value: JSONReadValue) -> list[str]:
    """How an agent says a tool's value: numbers as written (246.60, 41.1), codes as written
    or spelled one character at a time (H T 7 Q 2 M)."""
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, int | float):
        return _number_forms(float(value)) if abs(value) >= 2 else []
    text = str(value)
    if _CODE.match(text):
        spelled = " ".join(ch for ch in text if ch.isalnum())
        return [text, spelled]
    return []


def one_character_off(form: str, rng: np.random.Generator) -> str:
    """One character changed: a digit to another digit (never a leading zero), a letter to
    another letter."""
    positions = [i for i, ch in enumerate(form) if ch.isalnum()]
    digits = [i for i in positions if form[i].isdigit()]
    pool = digits or positions
    i = pool[int(rng.integers(len(pool)))] if len(pool) > 1 else pool[0]
    ch = form[i]
    if ch.isdigit():
        choices = [d for d in "0123456789" if d != ch and not (d == "0" and i == positions[0])]
    else:
        choices = [c for c in "ABCDEFGHJKLMNPQRSTUVWXYZ" if c != ch.upper()]
    return form[:i] + choices[int(rng.integers(len(choices)))] + form[i + 1 :]


def misread_tool_result(call: CleanCall, rng: np.random.Generator) -> Injected | None:
    """The agent tells the caller a value other than its tool returned (an amount or a code
    one character off), from that turn on."""
    timeline = call.timeline
    caller_words = " ".join(_caller_texts(timeline))
    everything = caller_words + " ".join(str(e.result) for e in timeline.tools)
    candidates: list[tuple[int, str, str, bool]] = []
    for turn in _agent_turns(timeline):
        text = turn_text(timeline, "assistant", turn)
        for event in timeline.tools:
            if event.turn > turn or not _succeeded(event):
                continue
            for _key, value in _leaves(event.result):
                for form in _mention_forms(value):
                    pattern = rf"(?<![\w.]){re.escape(form)}(?![\w])"
                    if re.search(pattern, text) and form not in caller_words:
                        is_number = isinstance(value, int | float)
                        candidates.append((turn, form, event.name, is_number))
    if not candidates:
        return None
    candidates = sorted(set(candidates))
    numbers = [c for c in candidates if c[3]]
    pool = numbers or candidates
    turn, form, tool, _ = pool[int(rng.integers(len(pool)))]
    for _ in range(20):
        said = one_character_off(form, rng)
        if said not in everything:
            break
    else:
        return None
    out = timeline
    pattern = rf"(?<![\w.]){re.escape(form)}(?![\w])"
    for later in _agent_turns(timeline):
        if later < turn:
            continue
        text = turn_text(out, "assistant", later)
        if re.search(pattern, text):
            out = set_turn_text(out, "assistant", later, re.sub(pattern, said, text))
    return Injected(out, {"turn": turn, "tool": tool, "tool_returned": form, "agent_said": said})


_VERIFICATION_TALK = re.compile(r"\b(verif\w*|one-time code|texted)\b", re.I)
# "First I need to verify you: your account number, ..." keeps its request for the details
_VERIFY_THEN_ASK = re.compile(r"^.*?\bverify you\s*:\s*(?P<ask>.+)$", re.I)


def _without_verification(sentence: str) -> str:
    """The sentence with its talk of verifying removed: gone entirely, or, when it also asks
    for the caller's details, only the asking part left."""
    if not _VERIFICATION_TALK.search(sentence):
        return sentence
    asked = _VERIFY_THEN_ASK.match(sentence)
    if asked and len(asked.group("ask").split()) >= 3:
        return f"Please give me {asked.group('ask')}"
    return ""


def skipped_policy_step(call: CleanCall, rng: np.random.Generator) -> Injected | None:
    """The agent never verifies the caller: its verification tool calls are gone (with the
    one-time-code exchange of a two-step check) and so is its talk of verifying, while it
    goes on to serve the caller as before."""
    timeline = call.timeline
    auth = _auth_events(timeline)
    if not auth or not all(_succeeded(e) for e in auth):
        return None
    auth_turns = sorted({e.turn for e in auth})
    # a turn that only sends a code, followed by a turn that checks it: the whole step goes
    intermediate = [
        turn
        for turn in auth_turns
        if turn + 1 in auth_turns
        and all(e.kind == "auth" for e in timeline.tools if e.turn == turn)
    ]
    out = timeline
    for turn in sorted(intermediate, reverse=True):
        out = remove_exchange(out, turn)
    out = drop_tools(out, [e for e in out.tools if e.kind != "auth"])
    dropped: list[str] = []
    for turn in _agent_turns(out):
        text = turn_text(out, "assistant", turn)
        said = sentences(text)
        kept = [k for k in (_without_verification(s) for s in said) if k]
        if kept == said:
            continue
        dropped += [s for s in said if s not in kept]
        out = set_turn_text(out, "assistant", turn, " ".join(kept) or "Thank you.")
    return Injected(
        out,
        {
            "removed_tools": [e.name for e in auth],
            "removed_exchanges": len(intermediate),
            "dropped_sentences": dropped,
        },
    )


# ---------------------------------------------------------------- conversation progression


def redundant_question(call: CleanCall, rng: np.random.Generator) -> Injected | None:
    """After verifying the caller, the agent loses track: it asks again what the call is
    about and for the details the caller already gave, and the caller has to repeat them."""
    timeline = call.timeline
    verified = [e for e in _auth_events(timeline) if _succeeded(e)]
    if not verified:
        return None
    auth = verified[-1]  # the step that completed verification
    later = sorted({e.turn for e in timeline.tools if e.turn > auth.turn})
    if not later:
        return None
    target = later[0]
    info = call.scenario.user_goal.information_required
    given = [
        (label, value)
        for label, value in info.items()
        if any(
            _answer_phrase(label, value) in s.intended_text
            for s in timeline.speech("user")
            if s.start < auth.t
        )
    ]
    if not given:
        return None
    given = given[:3]
    labels = [label.replace("_", " ") for label, _ in given]
    asked = labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]
    repeat = ", and ".join(_answer_phrase(label, value) for label, value in given)
    goal = call.scenario.user_goal.starting_utterance
    out = insert_exchange(
        timeline,
        target,
        f"Alright. Could you give me your {asked} again?",
        f"I already gave you that. {repeat[0].upper()}{repeat[1:]}.",
    )
    out = insert_exchange(
        out,
        target,
        "Sorry, what was it you were calling about today?",
        f"I told you at the start. {goal}",
    )
    return Injected(out, {"asked_again": labels, "goal_asked_again": True, "before_turn": target})


# ---------------------------------------------------------------- conciseness

_OPENINGS = (
    "Absolutely, and thank you so much for taking the time to call us today, I really do "
    "appreciate your patience while I take care of all of this for you.",
    "Of course! I completely understand, and I want you to know that I'm more than happy to "
    "help you with that, it's really no trouble at all, that's exactly what I'm here for.",
    "Great question, and let me just say that I really appreciate you reaching out to us, "
    "because we always want to make sure every caller gets all the help they need.",
)
_CLOSINGS = (
    "And of course, if you have any questions at all about any of this, now or at any point "
    "later on, please feel free to ask and I'll do my very best to explain everything in as "
    "much detail as you'd like.",
    "Just so you know, I'm here to help with anything at all, so please don't hesitate to let "
    "me know if there's anything else on your mind, big or small, whatever it may be.",
)


def _enumeration(events: list[ToolEvent]) -> str:
    items = list(
        dict.fromkeys(
            f"{key.replace('_', ' ')}: {value}"
            for event in events
            if isinstance(event.result, dict)
            for key, value in _leaves(event.result)
            if key and value not in (None, "", [])
        )
    )[:14]
    if len(items) < 3:
        return ""
    return "Just so you have absolutely everything, here is all of what I have on file: " + (
        "; ".join(items) + "."
    )


def verbose_turns(call: CleanCall, rng: np.random.Generator) -> Injected | None:
    """A chatty agent: every turn wrapped in pleasantries and filler, and every tool result
    read out field by field."""
    timeline = call.timeline
    out = timeline
    enumerated = []
    for n, turn in enumerate(_agent_turns(timeline)):
        text = turn_text(timeline, "assistant", turn)
        listing = _enumeration([e for e in timeline.tools if e.turn == turn])
        if listing:
            enumerated.append(turn)
        opening = _OPENINGS[(n + int(rng.integers(len(_OPENINGS)))) % len(_OPENINGS)]
        closing = _CLOSINGS[int(rng.integers(len(_CLOSINGS)))]
        padded = " ".join(p for p in (opening, text, listing, closing) if p)
        out = set_turn_text(out, "assistant", turn, padded)
    if not enumerated:
        return None
    return Injected(out, {"padded_turns": _agent_turns(timeline), "enumerated_turns": enumerated})


def one_enumerated_turn(call: CleanCall, rng: np.random.Generator) -> Injected | None:
    """The subtle form of ``verbose_turns``: a single agent turn, otherwise as it was, also
    reads out every field its tool returned; no pleasantries anywhere."""
    timeline = call.timeline
    listed = [
        (turn, listing)
        for turn in _agent_turns(timeline)
        for listing in [_enumeration([e for e in timeline.tools if e.turn == turn])]
        if listing
    ]
    if not listed:
        return None
    turn, listing = listed[int(rng.integers(len(listed)))]
    text = f"{turn_text(timeline, 'assistant', turn)} {listing}"
    return Injected(set_turn_text(timeline, "assistant", turn, text), {"enumerated_turn": turn})


# ---------------------------------------------------------------- speakability


def unspeakable_text(call: CleanCall, rng: np.random.Generator) -> Injected | None:
    """One agent turn written for a screen, not the ear: a markdown heading, a bullet list,
    a raw record id in backticks and a link."""
    timeline = call.timeline
    scored = []
    for turn in _agent_turns(timeline):
        events = [e for e in timeline.tools if e.turn == turn and _succeeded(e)]
        ids = [
            str(v)
            for e in events
            for _, v in _leaves(e.result)
            if isinstance(v, str) and _CODE.match(v)
        ]
        if ids and len(sentences(turn_text(timeline, "assistant", turn))) >= 2:
            scored.append((turn, ids))
    if not scored:
        return None
    turn, ids = scored[int(rng.integers(len(scored)))]
    record_id = ids[int(rng.integers(len(ids)))]
    site = re.sub(r"[^a-z]", "", call.domain.lower()) or "service"
    lines = "\n".join(f"- {s}" for s in sentences(turn_text(timeline, "assistant", turn)))
    text = (
        f"**Summary of your request**\n{lines}\n- Record: `{record_id}`\n"
        f"Details: https://www.{site}.example.com/account?ref={record_id}"
    )
    out = set_turn_text(timeline, "assistant", turn, text)
    return Injected(out, {"turn": turn, "record_id": record_id})


def raw_id_in_backticks(call: CleanCall, rng: np.random.Generator) -> Injected | None:
    """The subtle form of ``unspeakable_text``: one agent turn, otherwise as it was, ends with
    a record id written for a screen (in backticks), the only thing a listener cannot hear."""
    timeline = call.timeline
    found = [
        (turn, str(v))
        for turn in _agent_turns(timeline)
        for e in timeline.tools
        if e.turn == turn and _succeeded(e)
        for _, v in _leaves(e.result)
        if isinstance(v, str) and _CODE.match(v)
    ]
    if not found:
        return None
    turn, record_id = found[int(rng.integers(len(found)))]
    text = f"{turn_text(timeline, 'assistant', turn)} Reference: `{record_id}`."
    out = set_turn_text(timeline, "assistant", turn, text)
    return Injected(out, {"turn": turn, "record_id": record_id})


# ---------------------------------------------------------------- user behavioural fidelity

_ABANDON = (
    "Actually, forget it. I don't have time for this today. Bye.",
    "You know what, never mind. I'll sort it out some other time. Goodbye.",
)


def abandoned_goal(call: CleanCall, rng: np.random.Generator) -> Injected | None:
    """The simulated caller gives up half way: right before the agent would act on the
    request, it says it has no time and hangs up, although nothing in its goal told it to."""
    timeline = call.timeline
    writes = sorted({e.turn for e in timeline.tools if e.kind == "write"})
    tool_turns = sorted({e.turn for e in timeline.tools if e.kind != "auth"})
    target = writes[0] if writes else (tool_turns[-1] if tool_turns else None)
    if target is None or target < 2:
        return None
    caller_turn = target - 1
    if not any(s.turn == caller_turn for s in timeline.speech("user")):
        return None
    line = _ABANDON[int(rng.integers(len(_ABANDON)))]
    out = end_with_caller(timeline, caller_turn, line)
    return Injected(out, {"caller_turn": caller_turn, "said": line, "before_agent_turn": target})
