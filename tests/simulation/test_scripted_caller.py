from pathlib import Path

from tests.simulation.helpers import write_suite
from voxeval.benchmarks.eva.scenario import load_scenario_suite
from voxeval.simulation.callers.interruptions import CorrectingBehaviour
from voxeval.simulation.callers.scripted_caller import ScriptedCaller, label_asked
from voxeval.simulation.rule_behaviour import RuleBehaviour


def scenario(tmp_path: Path):  # type: ignore[no-untyped-def]
    return load_scenario_suite(write_suite(tmp_path / "suite")).scenarios[0]


def test_label_matching_with_synonyms_and_asr_errors() -> None:
    assert label_asked("date_of_birth", ["what", "is", "your", "birthday"])
    assert label_asked("member_id", ["can", "i", "have", "your", "member", "id"])
    assert label_asked("member_id", ["your", "membr", "id", "please"])  # transcription slip
    assert not label_asked("member_id", ["what", "is", "your", "date", "of", "birth"])


def test_answers_requested_fields_and_hangs_up_on_goodbye(tmp_path: Path) -> None:
    caller = ScriptedCaller()
    opening = caller.start(scenario(tmp_path))
    assert opening.text == "Hi, I would like to book a visit."
    turn = caller.respond(None, "Could I get your member ID and your date of birth?")
    assert turn.text == "Sure, my member id is KX4, and my date of birth is 1980-05-01."
    assert not turn.end_call and turn.heard == "Could I get your member ID and your date of birth?"
    assert caller.respond(None, "Shall I book Friday for you?").text == "Yes, please go ahead."
    assert caller.respond(None, "How can I help you today?").text == opening.text
    assert caller.respond(None, "One moment.").text == "Okay."
    bye = caller.respond(None, "You're all set. Have a great day!")
    assert bye.end_call and bye.text == "Thank you, goodbye."


def test_declines_offers_its_decision_tree_rejects(tmp_path: Path) -> None:
    caller = ScriptedCaller()
    caller.start(scenario(tmp_path))
    turn = caller.respond(None, "Would you like a reminder text message as well?")
    assert turn.text == "No, thank you, I don't want that."


def test_persona_changes_style_and_timing(tmp_path: Path) -> None:
    caller = ScriptedCaller(persona="elderly_slow")
    caller.start(scenario(tmp_path))
    turn = caller.respond(None, "What is your member ID and date of birth?")
    assert "..." in turn.text and caller.speech_rate < 1.0
    # the persona's rules, wrapped so that a pending correction cuts into the agent
    assert isinstance(caller.behaviour, CorrectingBehaviour)
    assert isinstance(caller.behaviour.inner, RuleBehaviour)
    assert caller.behaviour.persona.name == "elderly_slow"
    assert not hasattr(ScriptedCaller(persona="aggressive_impatient"), "barge_in_after_s")


def test_deterministic(tmp_path: Path) -> None:
    sc = scenario(tmp_path)
    runs = []
    for _ in range(2):
        caller = ScriptedCaller(persona="forgetful_disorganized")
        caller.start(sc)
        runs.append([caller.respond(None, q).text for q in ("member id?", "ok", "bye")])
    assert runs[0] == runs[1]


def test_choice_questions_get_the_closest_must_have(tmp_path: Path) -> None:
    caller = ScriptedCaller()
    caller.start(scenario(tmp_path))
    turn = caller.respond(None, "Which day would you like the visit?")
    assert turn.text == "What I need is this: The visit is on Friday."
