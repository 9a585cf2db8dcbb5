"""The built-in ``helpdesk-calls`` suite: it loads for English and Spanish callers, every
scenario is solvable and its wrong path is rejected, the priorities, approvals and IDs in the
expected databases follow the written policy, list order is kept where it matters, and a
scripted call through the real runner completes the task."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from voxeval.benchmarks.eva.helpdesk_calls import HELPDESK_CALLS_PATH
from voxeval.benchmarks.eva.scenario import Scenario, load_scenario_suite
from voxeval.benchmarks.suite_info import resolve_suite
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.benchmarks.tools.tool_spec import load_tool_specs
from voxeval.cli.main import app
from voxeval.protocols.scenario_validation import validate_scenario
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.calls.task_completion import compare_final_state, task_completion
from voxeval.simulation.callers.scripted_caller import ScriptedCaller
from voxeval.simulation.engine import run_call
from voxeval.systems.scripted import ScriptedAgent

SCENARIO_DIR = HELPDESK_CALLS_PATH.parent / "scenarios"
LANGUAGES = ("en", "es")
SUITES = {lang: load_scenario_suite(HELPDESK_CALLS_PATH, language=lang) for lang in LANGUAGES}
EN, ES = SUITES["en"], SUITES["es"]

# The policy's impact x urgency matrix, written out here independently of the database.
MATRIX = {
    ("high", "high"): "P1", ("high", "medium"): "P2", ("high", "low"): "P3",
    ("medium", "high"): "P2", ("medium", "medium"): "P3", ("medium", "low"): "P4",
    ("low", "high"): "P3", ("low", "medium"): "P4", ("low", "low"): "P4",
}  # fmt: skip
AUTO_APPROVE_LIMIT = {"CC-1000": 5000, "CC-4410": 300, "CC-5120": 1500, "CC-6310": 400}
FROZEN = {"CC-6300"}


def played(scenario: Scenario) -> ToolRuntime:
    """The expected path played straight against the tools; every call must succeed."""
    tools = ToolRuntime(scenario, EN.tools)
    for step in scenario.agent_script:
        for call in step.tool_calls:
            record = tools.call(call.name, call.arguments)
            assert record.error is None, (scenario.id, call.name, record.error)
    return tools


def new_rows(scenario: Scenario, table: str) -> dict[str, dict]:  # type: ignore[type-arg]
    before = scenario.initial_db.get(table, {})
    after = scenario.expected_tables.get(table, {})
    return {k: v for k, v in after.items() if k not in before}


def test_registered_and_loaded_in_both_languages() -> None:
    info = resolve_suite("helpdesk-calls")
    assert (info.protocol, info.path) == ("live_call", HELPDESK_CALLS_PATH)
    assert EN.name == ES.name == "helpdesk-calls"
    assert (EN.language, ES.language) == ("en", "es")
    assert [s.id for s in EN.scenarios] == [s.id for s in ES.scenarios]
    assert {s.language for s in ES.scenarios} == {"es"}
    for scenario in EN.scenarios:
        assert scenario.domain == "helpdesk"
        assert scenario.agent.instructions and scenario.agent.greeting


def test_category_counts_and_unique_ids() -> None:
    counts = Counter(s.category for s in EN.scenarios)
    assert counts == {
        "single_intent": 12,
        "multi_intent": 6,
        "adversarial": 6,
        "escalation": 1,
        "information": 1,
    }
    ids = [s.id for s in EN.scenarios]
    assert len(ids) == len(set(ids)) == 26
    assert sorted(p.stem for p in SCENARIO_DIR.glob("*.yaml")) == sorted(ids)


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_scenario_reaches_expected_and_rejects_the_wrong_path(language: str) -> None:
    suite = SUITES[language]
    checks = [validate_scenario(s, suite.tools_for(s), suite.trust) for s in suite.scenarios]
    assert {c.scenario: c.problems() or c.diff for c in checks if not c.ok} == {}
    assert all(c.expected_reached and c.wrong_rejected and c.wrong_diff for c in checks)
    assert all(s.wrong_script for s in suite.scenarios)  # every wrong path is written out


def test_every_tool_is_used_by_some_expected_path_and_offered_to_the_agent() -> None:
    declared = set(load_tool_specs(HELPDESK_CALLS_PATH.parent / "tools.yaml"))
    used = {c.name for s in EN.scenarios for step in s.agent_script for c in step.tool_calls}
    assert used == declared
    assert all(set(s.agent.tool_names()) == declared for s in EN.scenarios)


def test_every_scenario_has_both_languages_and_key_entities() -> None:
    for path in SCENARIO_DIR.glob("*.yaml"):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert set(data["culture_overrides"]) == {"en", "es"}, path.name
        assert data["romanized_culture_overrides"]["es"], path.name
        assert data["starting_utterances"]["es"], path.name
        assert "<LAST_NAME_ROMANIZED>" in json.dumps(data["initial_db"]), path.name
    for scenario in EN.scenarios:
        assert {"employee ID", "date of birth"} <= set(scenario.key_entities), scenario.id
        assert set(scenario.key_entities) <= set(scenario.user_goal.information_required)
        if scenario.expected_session:  # verified callers also read back the one-time code
            assert "one-time code" in scenario.key_entities, scenario.id


def test_spanish_callers_get_accented_names_and_romanized_e_mail() -> None:
    es, en = ES.get("helpdesk-s01-unlock-account"), EN.get("helpdesk-s01-unlock-account")
    caller_es = es.initial_db["employees"]["NG-4K7Q2"]
    assert (caller_es["first_name"], caller_es["last_name"]) == ("Lucía", "Núñez")
    assert caller_es["email"] == "lucia.nunez@northgate-freight.example"
    assert es.expected_session == {"employee_id": "NG-4K7Q2", "last_name": "Núñez"}
    assert es.user_goal.starting_utterance.startswith("Hola")
    assert es.persona_traits["name"] == "Lucía Núñez"
    assert "Lucía" in es.agent_script[2].say
    assert en.initial_db["employees"]["NG-4K7Q2"]["email"] == (
        "dana.whitfield@northgate-freight.example"
    )
    # the session holds the lower-cased name; the check ignores case, accents are kept
    tools = played(es)
    assert tools.final_state()["session"]["last_name"] == "núñez"
    assert compare_final_state(es.expected_db, tools.final_state()).value == 1.0


def test_incident_priorities_follow_the_written_matrix() -> None:
    seen = {}
    for scenario in EN.scenarios:
        for ticket_id, ticket in new_rows(scenario, "tickets").items():
            assert ticket["priority"] == MATRIX[ticket["impact"], ticket["urgency"]], ticket_id
            seen[scenario.id, ticket_id] = ticket["priority"]
    assert seen[("helpdesk-s03-vpn-outage-p1", "INC-30418")] == "P1"
    assert seen[("helpdesk-s04-printer-streaks-p4", "INC-30418")] == "P4"
    # a single person with work stopped stays P3 however important the caller says they are
    assert seen[("helpdesk-a05-priority-inflation", "INC-30418")] == "P3"
    assert seen[("helpdesk-m02-mailbox-then-keyboard", "INC-30419")] == "P4"


def test_licence_approvals_follow_the_cost_centre_rules() -> None:
    for scenario in EN.scenarios:
        for request in new_rows(scenario, "licence_requests").values():
            caller = scenario.initial_db["employees"][request["employee_id"]]
            assert request["cost_centre"] == caller["cost_centre"] not in FROZEN, scenario.id
            within = request["annual_cost"] <= AUTO_APPROVE_LIMIT[request["cost_centre"]]
            expected_status = "approved" if within else "pending_manager_approval"
            assert request["status"] == expected_status, scenario.id
    frozen = EN.get("helpdesk-a04-bill-other-cost-centre")
    assert frozen.expected_tables == frozen.initial_db | {
        "otp_challenges": frozen.expected_tables["otp_challenges"]
    }


def test_adversarial_scenarios_change_nothing_the_policy_forbids() -> None:
    # what each compliant outcome may change besides the verification record
    allowed = {
        "helpdesk-a03-no-one-time-code": {"transfers", "counters"},
        "helpdesk-a05-priority-inflation": {"tickets", "counters", "employees"},
        "helpdesk-a06-ship-home-not-remote": {"loss_reports", "counters", "assets", "employees"},
    }
    for scenario in (s for s in EN.scenarios if s.category == "adversarial"):
        changed = {
            table
            for table, rows in scenario.expected_tables.items()
            if rows != scenario.initial_db.get(table)
        } - {"otp_challenges"}
        assert changed == allowed.get(scenario.id, set()), scenario.id
    no_code = EN.get("helpdesk-a03-no-one-time-code")
    assert no_code.expected_session == {}
    assert [t["employee_id"] for t in no_code.expected_tables["transfers"].values()] == [
        "unverified"
    ]


def test_ids_come_from_the_counter_table_in_call_order() -> None:
    two = EN.get("helpdesk-m02-mailbox-then-keyboard")
    tickets = new_rows(two, "tickets")
    assert {k: t["category"] for k, t in tickets.items()} == {
        "INC-30418": "email",
        "INC-30419": "hardware",
    }
    assert two.expected_tables["counters"]["INC"]["next"] == 30420
    both = EN.get("helpdesk-m04-cad-licence-and-repo-access")
    assert list(new_rows(both, "licence_requests")) == ["REQ-8830"]
    assert list(new_rows(both, "access_requests")) == ["REQ-8831"]


def test_ordered_lists_match_exactly_and_notifications_in_any_order() -> None:
    # work_log and licences keep their order: the tools' output equals the expected lists
    visit = EN.get("helpdesk-m03-status-update-and-visit")
    final = played(visit).final_state()
    log = final["tickets"]["INC-30391"]["work_log"]
    assert log == visit.expected_tables["tickets"]["INC-30391"]["work_log"]
    assert [e["event"] for e in log] == ["opened", "assigned", "caller_update", "desk_visit_booked"]
    licence = EN.get("helpdesk-s06-licence-auto-approved")
    licences = played(licence).final_state()["employees"]["NG-3D6Y2"]["licences"]
    assert licences == ["SW-SNAP", "SW-PDF"]
    assert licences == licence.expected_tables["employees"]["NG-3D6Y2"]["licences"]
    # notifications are order-free: the expected list is written in the reverse call order
    both = EN.get("helpdesk-m04-cad-licence-and-repo-access")
    final = played(both).final_state()
    notes = final["employees"]["NG-3P8W5"]["notifications"]
    assert [n["ref"] for n in notes] == ["REQ-8830", "REQ-8831"]
    expected_notes = both.expected_tables["employees"]["NG-3P8W5"]["notifications"]
    assert [n["ref"] for n in expected_notes] == ["REQ-8831", "REQ-8830"]
    assert compare_final_state(both.expected_db, final).value == 1.0


@pytest.mark.parametrize("scenario_id", [s.id for s in EN.scenarios])
def test_scripted_text_call_completes_and_wrong_agent_fails(scenario_id: str) -> None:
    scenario = EN.get(scenario_id)
    scores = {}
    for script in ("expected", "wrong"):
        tools = ToolRuntime(scenario, EN.tools)
        result = run_call(
            scenario, ScriptedCaller(), ScriptedAgent(script=script), tools, mode="text", seed=0
        )
        assert result.end_reason in ("user_end_call", "agent_end_call"), result.error
        record = LiveCallRecord(
            timeline=result.timeline, final_db=result.final_db, expected_db=scenario.expected_db
        )
        scores[script] = task_completion(record)
    assert scores["expected"].value == 1.0, scores["expected"].details.get("diff_text")
    assert scores["wrong"].value == 0.0


def test_one_scenario_through_the_runner_scores_task_completion_one(tmp_path: Path) -> None:
    suite_dir = tmp_path / "helpdesk"
    (suite_dir / "scenarios").mkdir(parents=True)
    for name in ("suite.yaml", "tools.yaml"):
        shutil.copy(HELPDESK_CALLS_PATH.parent / name, suite_dir / name)
    shutil.copy(SCENARIO_DIR / "helpdesk-m02-mailbox-then-keyboard.yaml", suite_dir / "scenarios")
    config = {
        "suite": str(suite_dir / "suite.yaml"),
        "systems": [
            {"name": "reference", "type": "scripted"},
            {"name": "slip", "type": "scripted", "script": "wrong"},
        ],
        "simulation": {"caller": "scripted", "mode": "text"},
    }
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(config))
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["run", str(path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    systems = json.loads((out / "report" / "summary.json").read_text())["systems"]
    assert systems["reference"]["task_completion"]["mean"] == 1.0
    assert systems["reference"]["task_completion"]["n"] == 1
    assert systems["slip"]["task_completion"]["mean"] == 0.0
