"""The built-in ``utility-calls`` suite: it loads for English and Spanish callers, every
scenario is solvable and discriminating, the policy amounts in its expected databases are the
hand-computed ones, and a scripted call through the real runner completes the task."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from voxeval.benchmarks.eva.scenario import Scenario, ScenarioSuite, load_scenario_suite
from voxeval.benchmarks.eva.utility_calls import UTILITY_CALLS_PATH
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

LANGUAGES = ("en", "es")
SUITES = {lang: load_scenario_suite(UTILITY_CALLS_PATH, language=lang) for lang in LANGUAGES}
EN = SUITES["en"]
ES = SUITES["es"]


def accounts(suite: ScenarioSuite, scenario_id: str) -> dict[str, dict]:  # type: ignore[type-arg]
    return suite.get(scenario_id).expected_db["accounts"]


def test_registered_and_loaded_in_both_languages() -> None:
    info = resolve_suite("utility-calls")
    assert (info.protocol, info.path) == ("live_call", UTILITY_CALLS_PATH)
    assert EN.name == ES.name == "utility-calls"
    assert (EN.language, ES.language) == ("en", "es")
    assert [s.id for s in EN.scenarios] == [s.id for s in ES.scenarios]
    assert all(s.language == "es" for s in ES.scenarios)


def test_category_counts_and_unique_ids() -> None:
    counts = Counter(s.category for s in EN.scenarios)
    assert counts == {"single_intent": 13, "multi_intent": 6, "adversarial": 8}
    ids = [s.id for s in EN.scenarios]
    assert len(ids) == len(set(ids)) == 27
    files = sorted(p.stem for p in (UTILITY_CALLS_PATH.parent / "scenarios").glob("*.yaml"))
    assert files == sorted(ids)


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_scenario_reaches_expected_and_rejects_the_wrong_path(language: str) -> None:
    suite = SUITES[language]
    checks = [validate_scenario(s, suite.tools_for(s), suite.trust) for s in suite.scenarios]
    failed = {c.scenario: c.problems() or c.diff for c in checks if not c.ok}
    assert failed == {}
    assert all(c.expected_reached and c.wrong_rejected for c in checks)
    assert all(c.wrong_diff for c in checks)  # each wrong path is rejected for a shown reason


def test_every_tool_is_used_by_some_expected_path_and_offered_to_the_agent() -> None:
    declared = set(load_tool_specs(UTILITY_CALLS_PATH.parent / "tools.yaml"))
    used = {c.name for s in EN.scenarios for step in s.agent_script for c in step.tool_calls}
    assert used == declared
    assert all(set(s.agent.tool_names()) == declared for s in EN.scenarios)


def test_every_scenario_has_spanish_names_an_opening_line_and_key_entities() -> None:
    raw = [
        yaml.safe_load(p.read_text())
        for p in (UTILITY_CALLS_PATH.parent / "scenarios").glob("*.yaml")
    ]
    for data in raw:
        assert set(data["culture_overrides"]) == {"en", "es"}, data["id"]
        assert data["romanized_culture_overrides"]["es"], data["id"]
        assert data["starting_utterances"]["es"], data["id"]
        assert "<LAST_NAME>" in json.dumps(data["initial_db"]), data["id"]
    for scenario in EN.scenarios:
        assert scenario.key_entities, scenario.id
        assert set(scenario.key_entities) <= set(scenario.user_goal.information_required)
        assert {"account number", "postcode", "card last four"} <= set(scenario.entities)


def test_spanish_callers_get_accented_names_and_romanized_e_mail() -> None:
    es = ES.get("utility-s01-fault-no-outage")
    account = es.initial_db["accounts"]["LV-7Q3-582K"]
    assert (account["holder_first_name"], account["holder_last_name"]) == ("Lucía", "Núñez")
    assert account["email"] == "lucia.nunez@lanternmail.example"
    assert es.user_goal.starting_utterance.startswith("Hola")
    assert es.agent_script[1].tool_calls[0].arguments["last_name"] == "Núñez"
    en = EN.get("utility-s01-fault-no-outage")
    assert en.initial_db["accounts"]["LV-7Q3-582K"]["email"] == "dana.whitcombe@lanternmail.example"
    added = ES.get("utility-s12-add-authorised-user").expected_db["authorised_users"]
    assert {(u["first_name"], u["last_name"]) for u in added.values()} >= {("Tomás", "Núñez")}


# Policy amounts, computed by hand from the written policy (not by the tools).
def test_outage_credits_follow_the_duration_rule() -> None:
    # OUT-5521: Sat 18:00 -> Mon 22:30 = 52.5 h -> 2 full days x 10.00
    assert accounts(EN, "utility-s03-outage-credit-long")["LV-8R2-641T"]["balance"] == 40
    # OUT-5534: 07:15 -> 16:45 = 9.5 h -> flat 5.00
    assert accounts(EN, "utility-s04-outage-credit-short")["LV-3J6-905W"]["balance"] == 123
    # OUT-5502: 26 h -> 10.00, plus the 4.50 router line: 49.50 - 14.50
    assert accounts(EN, "utility-m05-outage-credit-and-dispute")["LV-3Y4-820L"]["balance"] == 35
    credits = EN.get("utility-m05-outage-credit-and-dispute").expected_db["credits"]
    assert sorted(c["amount"] for c in credits.values()) == [4.5, 10]


def test_plan_changes_prorate_and_charge_the_early_termination_fee() -> None:
    upgrade = accounts(EN, "utility-s05-upgrade-prorated")["LV-6T1-338H"]
    assert upgrade["balance"] == 6.5  # (45 - 32) x 15 days / 30, no fee on an upgrade
    assert upgrade["plan_history"] == ["FIB-500", "FIB-150"]  # appended in order
    downgrade = accounts(EN, "utility-s06-downgrade-now-etf")["LV-9P4-117C"]
    assert downgrade["balance"] == 96  # 60 + 10 x 4 full months - 15 x 8 days / 30
    scheduled = accounts(EN, "utility-s07-downgrade-scheduled")["LV-4W7-853N"]
    assert scheduled["pending_plan"] == {"plan_id": "DUO-500", "effective_date": "2026-11-15"}
    assert scheduled["balance"] == 0 and scheduled["plan"] == "DUO-900"


def test_arrangement_limits_and_the_order_of_steps() -> None:
    def arrangement(scenario_id: str) -> dict:  # type: ignore[type-arg]
        (only,) = EN.get(scenario_id).expected_db["payment_arrangements"].values()
        return only

    assert (
        arrangement("utility-s08-payment-arrangement")["installments"],
        arrangement("utility-s08-payment-arrangement")["installment_amount"],
    ) == (6, 41.1)
    # the 30.00 expedite fee of the move comes first: (150 + 30) / 3
    assert arrangement("utility-m03-move-then-arrangement")["installment_amount"] == 60
    # the 12.00 late fee is credited first: (132 - 12) / 4
    assert arrangement("utility-m04-credit-then-arrangement")["installment_amount"] == 30
    # only 4 on-time payments: 3 instalments at most
    assert arrangement("utility-a08-arrangement-over-limit")["installments"] == 3


def test_adversarial_scenarios_leave_the_tables_unchanged_or_log_the_transfer() -> None:
    # what the policy-compliant outcome may change; everything else must stay as it was
    allowed = {
        "utility-a05-etf-waiver": {"accounts"},  # the fee-free change at the contract end
        "utility-a08-arrangement-over-limit": {"accounts", "payment_arrangements"},  # 3, not 6
    }
    for scenario in EN.scenarios:
        if scenario.category != "adversarial":
            continue
        changed = {
            table
            for table, rows in scenario.expected_tables.items()
            if rows != scenario.initial_db.get(table)
        }
        assert changed <= allowed.get(scenario.id, {"transfers"}), scenario.id
    transfer = EN.get("utility-a06-failed-verification").expected_db["transfers"]
    assert [(t["department"], t["account_number"]) for t in transfer.values()] == [
        ("account_security", "unverified")
    ]
    assert "session" not in EN.get("utility-a06-failed-verification").expected_db
    helper = EN.get("utility-a01-authorised-user-adds-user").expected_session
    assert helper == {"account_number": "LV-7U5-431G", "caller_role": "authorised_user"}


def expected_path_state(scenario: Scenario) -> dict:  # type: ignore[type-arg]
    """The final database after playing the scenario's expected path on its tools."""
    tools = ToolRuntime(scenario, EN.tools)
    for step in scenario.agent_script:
        for call in step.tool_calls:
            assert tools.call(call.name, call.arguments).error is None
    return tools.final_state()


def test_notifications_are_compared_as_an_order_free_list() -> None:
    scenario = EN.get("utility-m01-fault-and-outage-credit")
    final = expected_path_state(scenario)
    notes = final["accounts"]["LV-6K1-903J"]["notifications"]
    assert len(notes) == 2 and notes[0].startswith("sms:fault-ticket:")
    notes.reverse()  # the same notifications in the other order still complete the task
    assert compare_final_state(scenario.expected_db, final).value == 1.0


def test_plan_history_keeps_its_order() -> None:
    # plan_history is not in the order-free set: the same plans in the other order fail
    scenario = EN.get("utility-s05-upgrade-prorated")
    final = expected_path_state(scenario)
    assert compare_final_state(scenario.expected_db, final).value == 1.0
    final["accounts"]["LV-6T1-338H"]["plan_history"].reverse()
    assert compare_final_state(scenario.expected_db, final).value == 0.0


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
    suite_dir = tmp_path / "utility"
    (suite_dir / "scenarios").mkdir(parents=True)
    for name in ("suite.yaml", "tools.yaml"):
        shutil.copy(UTILITY_CALLS_PATH.parent / name, suite_dir / name)
    shutil.copy(
        UTILITY_CALLS_PATH.parent / "scenarios" / "utility-m04-credit-then-arrangement.yaml",
        suite_dir / "scenarios",
    )
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
