"""LLM behaviour against the scripted OpenAI-compatible loopback server: word positions to
seconds, schema-checked answers retried and counted, rule fallback counted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.fakes.openai_server import FakeOpenAIServer, chat_text
from tests.simulation.helpers import write_suite
from voxeval.benchmarks.eva.scenario import load_scenario_suite
from voxeval.providers.llm.llm_openai import OpenAIChat
from voxeval.providers.usage.usage_ledger import usage_ledger
from voxeval.simulation.caller_behaviour import BargeIn, ListeningPlan
from voxeval.simulation.callers.llm_caller import LLMCaller
from voxeval.simulation.llm_behaviour import DECISION_PROMPT_OPENING, LLMBehaviour, after_word_s
from voxeval.simulation.personas import BACKCHANNELS, get_persona
from voxeval.simulation.rule_behaviour import RuleBehaviour

# 20 words, said in 8 s: word n ends at 0.4 n seconds
AGENT = (
    "Thanks for waiting. I see two open slots this week, one Thursday morning "
    "and one on Friday afternoon, which suits?"
)
HISTORY = [
    {"role": "system", "content": "caller instructions"},
    {"role": "user", "content": "(the call connects)"},
    {"role": "assistant", "content": "Hi, I would like to book a visit."},
]


def answer(backchannels: list[int], barge: int | None) -> Any:
    return chat_text(
        json.dumps({"backchannel_after_words": backchannels, "barge_in_after_word": barge})
    )


def behaviour(
    server: FakeOpenAIServer,
    persona: str = "aggressive_impatient",
    language: str = "en",
    schema_retries: int = 0,
) -> LLMBehaviour:
    llm = OpenAIChat(base_url=server.url, model="m", schema_retries=schema_retries)
    rules = RuleBehaviour(persona, language, seed=5)
    return LLMBehaviour(llm, rules, conversation=lambda: HISTORY, seed=100)


def test_word_positions_become_seconds_in_proportion_to_words() -> None:
    assert len(AGENT.split()) == 20
    assert after_word_s(10, 20, 8.0) == 4.0
    with FakeOpenAIServer() as server:
        server.push(answer([3, 8], 10))
        chosen = behaviour(server)
        plan = chosen.listening_plan(AGENT, 8.0)
        body = server.requests[0].body
    assert plan.barge_in == BargeIn(4.0)
    assert [b.at_s for b in plan.backchannels] == [1.2, 3.2]
    assert all(b.text in BACKCHANNELS["en"] for b in plan.backchannels)
    assert chosen.stats.as_dict() == {
        "decisions": 1, "skipped": 0, "llm_calls": 1, "parse_failures": 0, "fallbacks": 0,
    }  # fmt: skip
    assert body["response_format"]["type"] == "json_schema"
    assert body["seed"] == 100 + 1000
    system, user = body["messages"][0]["content"], body["messages"][1]["content"]
    assert system.startswith(DECISION_PROMPT_OPENING)
    assert get_persona("aggressive_impatient").prompt in system
    assert "caller: Hi, I would like to book a visit." in user
    assert "agent: (the call connects)" in user and "caller instructions" not in user
    assert "[3] waiting." in user and "[20] suits?" in user and "(20 words)" in user


def test_backchannels_outside_the_edges_or_after_the_barge_in_are_dropped() -> None:
    with FakeOpenAIServer() as server:
        # word 1 ends at 0.4 s (< 0.5 s edge), 9 at 3.6 s (within 0.5 s of the cut at 4.0 s),
        # 19 and 20 end inside the last 0.5 s; a barge-in after the last word is no barge-in
        server.push(answer([1, 9, 5], 10), answer([5, 20, 19, 18], 20))
        chosen = behaviour(server)
        first = chosen.listening_plan(AGENT, 8.0)
        second = chosen.listening_plan(AGENT, 8.0)
    assert [b.at_s for b in first.backchannels] == [2.0]
    assert second.barge_in is None
    assert [b.at_s for b in second.backchannels] == [2.0, 7.2]


def test_a_malformed_answer_is_retried_with_a_note_and_counted() -> None:
    with FakeOpenAIServer() as server:
        server.push(chat_text("Mm-hm, I would just listen."), answer([], 12))
        chosen = behaviour(server)
        plan = chosen.listening_plan(AGENT, 8.0)
        retry = server.requests[1].body
    assert plan == ListeningPlan((), BargeIn(4.8))
    assert chosen.stats.parse_failures == 1 and chosen.stats.llm_calls == 2
    assert chosen.stats.fallbacks == 0
    assert retry["messages"][2]["content"] == "Mm-hm, I would just listen."
    assert "could not be used" in retry["messages"][3]["content"]
    assert retry["seed"] == 100 + 1000 + 1  # a fresh seed: a cached bad answer cannot return


def test_a_word_the_utterance_does_not_have_is_a_parse_failure() -> None:
    with FakeOpenAIServer() as server:
        server.push(answer([25], None), answer([5], None))
        chosen = behaviour(server)
        plan = chosen.listening_plan(AGENT, 8.0)
        note = server.requests[1].body["messages"][3]["content"]
    assert [b.at_s for b in plan.backchannels] == [2.0] and plan.barge_in is None
    assert chosen.stats.parse_failures == 1
    assert "has 20 words" in note and "[25]" in note


def test_persistent_failure_falls_back_to_the_rules_and_is_counted() -> None:
    with FakeOpenAIServer() as server:
        server.push(chat_text("no"), chat_text('{"barge_in_after_word": 3}'), chat_text("{}"))
        chosen = behaviour(server, persona="elderly_slow")
        plan = chosen.listening_plan(AGENT, 8.0)
    expected = RuleBehaviour("elderly_slow", "en", seed=5).listening_plan(AGENT, 8.0)
    assert plan == expected and expected.backchannels  # the rules' own (non-empty) plan
    assert chosen.stats.as_dict() == {
        "decisions": 1, "skipped": 0, "llm_calls": 3, "parse_failures": 3, "fallbacks": 1,
    }  # fmt: skip


def test_the_provider_retries_count_towards_the_same_budget() -> None:
    with FakeOpenAIServer() as server:
        # the provider tries twice (schema_retries=1) before giving up; one answer is left
        server.push(chat_text("x"), chat_text("y"), answer([5], None))
        chosen = behaviour(server, schema_retries=1)
        plan = chosen.listening_plan(AGENT, 8.0)
        assert len(server.requests) == 3
    assert [b.at_s for b in plan.backchannels] == [2.0]
    assert chosen.stats.llm_calls == 3 and chosen.stats.parse_failures == 2
    with FakeOpenAIServer() as server:
        # three failed tries inside one provider call spend the whole budget: no fourth request
        server.push(chat_text("x"), chat_text("y"), chat_text("z"), answer([5], None))
        chosen = behaviour(server, schema_retries=2)
        chosen.listening_plan(AGENT, 8.0)
        assert len(server.requests) == 3
    assert chosen.stats.fallbacks == 1 and chosen.stats.parse_failures == 3


def test_short_utterances_get_the_rule_plan_without_a_call() -> None:
    with FakeOpenAIServer() as server:
        chosen = behaviour(server, persona="elderly_slow")
        plans = [chosen.listening_plan("Sure, one moment please.", 1.9) for _ in range(30)]
        assert not server.requests
    rules = RuleBehaviour("elderly_slow", "en", seed=5)
    assert plans == [rules.listening_plan("Sure, one moment please.", 1.9) for _ in range(30)]
    assert chosen.stats.skipped == 30 and chosen.stats.decisions == 0


def test_spanish_decisions_backchannel_in_spanish() -> None:
    with FakeOpenAIServer() as server:
        server.push(answer([4, 9, 14], None))
        chosen = behaviour(server, persona="elderly_slow", language="es")
        plan = chosen.listening_plan(AGENT, 8.0)
        system = server.requests[0].body["messages"][0]["content"]
    assert len(plan.backchannels) == 3
    assert {b.text for b in plan.backchannels} <= set(BACKCHANNELS["es"])
    assert '"ajá"' in system


def test_speaking_plans_keep_the_llm_markers_and_add_rule_pauses() -> None:
    with FakeOpenAIServer() as server:
        chosen = behaviour(server, persona="elderly_slow")
        plan = chosen.speaking_plan("Um... my code is... KX4.")
    assert plan.pieces == ("Um", "my code is", "KX4.") and len(plan.pauses_s) == 2
    assert not server.requests


def test_decision_calls_are_attributed_to_the_caller() -> None:
    with FakeOpenAIServer() as server:
        server.push(chat_text("bad"), answer([], None))
        chosen = behaviour(server)
        with usage_ledger() as ledger:
            chosen.listening_plan(AGENT, 8.0)
    assert ledger["caller"].calls == 2 and ledger["caller"].requests == 2
    assert ledger["caller"].prompt_tokens == 10  # a call the provider rejected reports none


def test_llm_caller_decides_with_its_own_conversation(tmp_path: Path) -> None:
    scenario = load_scenario_suite(write_suite(tmp_path / "suite")).scenarios[0]
    with FakeOpenAIServer() as server:
        server.push(chat_text("My member ID is KX4."), answer([2], None))
        llm = OpenAIChat(base_url=server.url, model="m")
        caller = LLMCaller(llm=llm, persona="elderly_slow", seed=7)
        assert isinstance(caller.behaviour, LLMBehaviour)
        caller.start(scenario)
        caller.respond(None, "Hello, what is your member ID?")
        plan = caller.behaviour.listening_plan(AGENT, 8.0)
        decision = server.requests[1].body["messages"][1]["content"]
    assert [b.at_s for b in plan.backchannels] == [0.8] and plan.barge_in is None
    assert "agent: Hello, what is your member ID?" in decision
    assert "caller: My member ID is KX4." in decision
    rules = LLMCaller(llm=llm, behaviour_kind="rules", seed=7).behaviour
    assert isinstance(rules, RuleBehaviour) and rules.seed == 7
