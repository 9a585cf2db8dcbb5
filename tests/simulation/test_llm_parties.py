"""LLM-backed parties in text-only mode against the scripted OpenAI-compatible server."""

from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAIServer, chat_text, chat_tool_call
from tests.simulation.helpers import write_suite
from tests.simulation.test_live_calls_models import responder
from voxeval.benchmarks.eva.scenario import load_scenario_suite
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.errors import HarnessFault
from voxeval.providers import create_provider
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.calls.task_completion import task_completion
from voxeval.simulation.callers.llm_caller import EMPTY_ANSWER_TRIES, LLMCaller, caller_prompt
from voxeval.simulation.engine import run_call
from voxeval.simulation.personas import get_persona
from voxeval.systems.hybrid import HybridAgent


def suite(tmp_path: Path):  # type: ignore[no-untyped-def]
    return load_scenario_suite(write_suite(tmp_path / "suite"))


def test_caller_prompt_carries_goal_rules_and_facts(tmp_path: Path) -> None:
    sc = suite(tmp_path).scenarios[0]
    prompt = caller_prompt(sc, get_persona("elderly_slow"))
    for fragment in (
        "Book a visit on Friday.",
        "Decline any offer of a reminder text message.",
        "- member_id: KX4",
        sc.current_date_time,
        "A busy parent.",
        "slowly",
    ):
        assert fragment in prompt


def test_text_mode_call_with_llm_caller_and_hybrid_agent(tmp_path: Path) -> None:
    s = suite(tmp_path)
    sc = s.scenarios[0]
    with FakeOpenAIServer(responder) as server:
        spec = {"provider": "openai", "base_url": server.url, "model": "m"}
        llm = create_provider("llm", spec)
        agent = HybridAgent(audio_llm=create_provider("audio_llm", spec))
        result = run_call(sc, LLMCaller(llm=llm), agent, ToolRuntime(sc, s.tools), mode="text")
        bodies = [r.body for r in server.requests]
    assert result.end_reason == "user_end_call", result.error
    record = LiveCallRecord(
        timeline=result.timeline, final_db=result.final_db, expected_db=sc.expected_db
    )
    assert task_completion(record).value == 1.0
    caller_bodies = [b for b in bodies if b["messages"][0]["content"].startswith("You are")]
    assert caller_bodies[0]["tools"][0]["function"]["name"] == "end_call"
    tool_messages = [m for b in bodies for m in b["messages"] if m["role"] == "tool"]
    assert any('"verified"' in m["content"] for m in tool_messages)


def test_llm_caller_hangs_up_with_end_call(tmp_path: Path) -> None:
    sc = suite(tmp_path).scenarios[0]
    with FakeOpenAIServer() as server:
        server.push(chat_text("My member ID is KX4."), chat_tool_call("end_call", {}))
        caller = LLMCaller(
            llm=create_provider("llm", {"provider": "openai", "base_url": server.url, "model": "m"})
        )
        assert caller.start(sc).text == sc.user_goal.starting_utterance
        first = caller.respond(None, "What is your member ID?")
        assert (first.text, first.end_call) == ("My member ID is KX4.", False)
        last = caller.respond(None, "Done, anything else?")
        assert last.end_call and last.text == "Goodbye."


def test_llm_caller_samples_with_a_per_call_seed(tmp_path: Path) -> None:
    sc = suite(tmp_path).scenarios[0]
    with FakeOpenAIServer() as server:
        server.push(chat_text("KX4."), chat_text("Friday."))
        llm = create_provider("llm", {"provider": "openai", "base_url": server.url, "model": "m"})
        caller = LLMCaller(llm=llm, temperature=0.7, seed=41)
        caller.start(sc)
        caller.respond(None, "Your member ID?")
        caller.respond(None, "Which day?")
        seeds = [r.body.get("seed") for r in server.requests]
    assert seeds == [42, 43]  # the call's seed plus the turn number: reruns sample the same words


def test_an_empty_caller_answer_is_asked_again_with_new_seeds(tmp_path: Path) -> None:
    sc = suite(tmp_path).scenarios[0]
    with FakeOpenAIServer() as server:
        server.push(chat_text(""), chat_text("   "), chat_text("My member ID is KX4."))
        llm = create_provider("llm", {"provider": "openai", "base_url": server.url, "model": "m"})
        caller = LLMCaller(llm=llm, seed=41)
        caller.start(sc)
        turn = caller.respond(None, "Your member ID?")
        seeds = [r.body.get("seed") for r in server.requests]
    assert (turn.text, turn.end_call) == ("My member ID is KX4.", False)
    assert len(seeds) == 3 and len(set(seeds)) == 3 and seeds[0] == 42
    # the empty answers left no trace in what the caller remembers
    assert [m["content"] for m in caller.messages[-2:]] == ["Your member ID?", turn.text]


def test_a_caller_that_keeps_answering_nothing_is_a_simulator_fault(tmp_path: Path) -> None:
    sc = suite(tmp_path).scenarios[0]
    with FakeOpenAIServer() as server:
        server.push(*[chat_text("") for _ in range(EMPTY_ANSWER_TRIES)])
        llm = create_provider("llm", {"provider": "openai", "base_url": server.url, "model": "m"})
        caller = LLMCaller(llm=llm)
        caller.start(sc)
        with pytest.raises(HarnessFault, match="empty answer") as raised:
            caller.respond(None, "Your member ID?")
        assert len(server.requests) == EMPTY_ANSWER_TRIES
    assert raised.value.component == "simulator" and raised.value.retryable


def test_a_wordless_hang_up_says_goodbye(tmp_path: Path) -> None:
    sc = suite(tmp_path).scenarios[0]
    with FakeOpenAIServer() as server:
        server.push(chat_tool_call("end_call", {}))
        llm = create_provider("llm", {"provider": "openai", "base_url": server.url, "model": "m"})
        caller = LLMCaller(llm=llm)
        caller.start(sc)
        turn = caller.respond(None, "Anything else?")
        assert len(server.requests) == 1
    assert (turn.text, turn.end_call) == ("Goodbye.", True)


def test_caller_temperature_reaches_the_llm_caller() -> None:
    from voxeval.simulation.simulation_config import parse_simulation

    sim = parse_simulation(
        {"caller": "llm", "mode": "text", "caller_temperature": 0.8,
         "caller_llm": {"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m"}}
    )  # fmt: skip
    caller = sim.build_caller(None, None, seed=5)
    assert caller.temperature == 0.8 and caller.seed == 5  # type: ignore[attr-defined]
    assert parse_simulation({}).caller_temperature == 0.0
