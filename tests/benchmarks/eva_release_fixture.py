"""A small EVA-Bench release, written by the tests in exactly the shipped layout: a parcel
delivery line with four records, one initial-database file per record, name placeholders,
``_current_date``, a ``float`` parameter and a tool module whose refund ids come from the
per-conversation call count."""

from __future__ import annotations

import copy
import json
import textwrap
from pathlib import Path
from typing import Any

import yaml

DOMAIN = "parcel"
MODULE = "parcelco_eva.tools.parcel_tools"

TOOLS_PY = '''
"""Parcel line tools in the release convention: (params, db, call_index) -> {"status": ...}."""


def get_parcel(params, db, call_index):
    parcel = db.get("parcels", {}).get(params["tracking_number"].upper())
    if parcel is None:
        return {"status": "error", "error_type": "not_found", "message": "no such parcel"}
    if parcel["recipient"]["last_name"].lower() != params["last_name"].lower():
        return {"status": "error", "error_type": "authentication_failed", "message": "no match"}
    db.setdefault("session", {})["tracking_number"] = params["tracking_number"].upper()
    db["session"]["last_name"] = params["last_name"]
    return {"status": "success", "parcel": dict(parcel)}


def reroute_parcel(params, db, call_index):
    parcel = db["parcels"].get(params["tracking_number"].upper())
    if parcel is None:
        return {"status": "error", "error_type": "not_found", "message": "no such parcel"}
    parcel["address"] = params["new_address"]
    parcel["status"] = "rerouted"
    return {"status": "success", "address": parcel["address"]}


def issue_refund(params, db, call_index):
    tracking = params["tracking_number"].upper()
    if tracking not in db["parcels"]:
        return {"status": "error", "error_type": "not_found", "message": "no such parcel"}
    refund_id = f"RF-{tracking}-{call_index:03d}"
    db["refunds"][refund_id] = {
        "refund_id": refund_id,
        "tracking_number": tracking,
        "amount": params["amount"],
        "issued_on": db["_current_date"],
    }
    return {"status": "success", "refund_id": refund_id}
'''

AGENT = {
    "id": "agent_parcel",
    "name": "Parcel Agent",
    "role": "You are the voice agent of a parcel delivery company.",
    "tool_module_path": MODULE,
    "instructions": "Verify the caller with tracking number and last name before any change.",
    "tools": [
        {
            "id": "get_parcel",
            "name": "get_parcel",
            "description": "Look up a parcel and verify the caller.",
            "tool_type": "read",
            "required_parameters": [
                {"name": "tracking_number", "type": "string", "description": "tracking code"},
                {"name": "last_name", "type": "string", "description": "recipient last name"},
            ],
        },
        {
            "id": "reroute_parcel",
            "name": "reroute_parcel",
            "description": "Send a parcel to another address.",
            "tool_type": "write",
            "required_parameters": [
                {"name": "tracking_number", "type": "string"},
                {"name": "new_address", "type": "string"},
            ],
        },
        {
            "id": "issue_refund",
            "name": "issue_refund",
            "description": "Refund part of the shipping fee.",
            "tool_type": "write",
            "required_parameters": [
                {"name": "tracking_number", "type": "string"},
                {"name": "amount", "type": "float", "description": "amount in USD"},
            ],
            "optional_parameters": [
                {"name": "reason", "type": "string", "enum": ["late", "damaged"]},
            ],
        },
    ],
}


def _initial_db(tracking: str) -> dict[str, Any]:
    return {
        "_current_date": "2026-03-17",
        "parcels": {
            tracking: {
                "tracking_number": tracking,
                "recipient": {
                    "first_name": "<FIRST_NAME>",
                    "last_name": "<LAST_NAME>",
                    "email": "<FIRST_NAME_ROMANIZED>.<LAST_NAME_ROMANIZED>@example.com",
                    "phone": "<PHONE>",
                },
                "address": "12 Elm Street",
                "status": "in_transit",
                "fee": 19.0,
            }
        },
        "refunds": {},
    }


def _call(tool: str, **params: Any) -> dict[str, Any]:
    return {"event_type": "tool_call", "tool_name": tool, "params": params}


def _says(who: str, text: str) -> dict[str, Any]:
    return {"event_type": f"{who}_utterance", "utterance": text}


def _record(
    record_id: str,
    tracking: str,
    goal: str,
    trace: list[dict[str, Any]],
    change: Any,
    session: bool = True,
) -> tuple[dict[str, Any], dict[str, Any]]:
    initial = _initial_db(tracking)
    expected = copy.deepcopy(initial)
    change(expected)
    if session:
        expected["session"] = {"tracking_number": tracking, "last_name": "<LAST_NAME>"}
    record = {
        "id": record_id,
        "current_date_time": "2026-03-17 10:45 CST",
        "user_goal": {
            "high_level_user_goal": goal,
            "decision_tree": {
                "must_have_criteria": [goal],
                "nice_to_have_criteria": [],
                "negotiation_behavior": [],
                "resolution_condition": "The agent confirms the change.",
                "failure_condition": "The agent cannot help.",
                "escalation_behavior": "Do not ask for a supervisor.",
                "edge_cases": [],
            },
            "information_required": {
                "Tracking number": tracking,
                "Last name": "<LAST_NAME>",
                "First name": "<FIRST_NAME>",
            },
        },
        "user_config": {
            "name": "<FIRST_NAME> <LAST_NAME>",
            "gender": "woman",
            "user_persona_id": 1,
            "user_persona": "You are brief and polite.",
        },
        "expected_flow": f"Caller wants: {goal}",
        "scenario_context": {"premise": "A parcel is on its way."},
        "ground_truth": {
            "expected_scenario_db": expected,
            "expected_trace": {"trace": trace, "conversation_ended": True},
        },
        "starting_utterances": {
            "en": "Hi, I am calling about my parcel.",
            "es": "Hola, llamo por mi paquete.",
        },
        "culture_overrides": {
            "en": {"first_name": "Maria", "last_name": "Lopez", "phone": "+1-512-555-0148"},
            "es": {"first_name": "Lucía", "last_name": "Núñez", "phone": "+34 619 412 770"},
        },
        "romanized_culture_overrides": {
            "en": {"first_name": "Maria", "last_name": "Lopez"},
            "es": {"first_name": "Lucia", "last_name": "Nunez"},
        },
    }
    return record, initial


def _auth(tracking: str) -> list[dict[str, Any]]:
    return [
        _says("user", "Hi, I am calling about my parcel."),
        _says("agent", "Hello, parcel line. May I have the tracking number and last name?"),
        _says("user", f"{tracking}, last name <LAST_NAME>."),
        _call("get_parcel", tracking_number=tracking, last_name="<LAST_NAME>"),
        {"event_type": "tool_response", "tool_name": "get_parcel", "status": "success"},
    ]


def _refund(amount: float, n: int) -> Any:
    def change(db: dict[str, Any]) -> None:
        tracking = next(iter(db["parcels"]))
        for i in range(1, n + 1):
            rid = f"RF-{tracking}-{i:03d}"
            db["refunds"][rid] = {
                "refund_id": rid,
                "tracking_number": tracking,
                "amount": amount,
                "issued_on": "2026-03-17",
            }

    return change


def _reroute(db: dict[str, Any]) -> None:
    parcel = next(iter(db["parcels"].values()))
    parcel.update(address="4 Oak Avenue", status="rerouted")


def records() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(record, initial database) pairs."""
    late = [
        *_auth("PX4471"),
        _says("agent", "I found your parcel. It is late; shall I refund the fee of 12.50?"),
        _says("user", "Yes please."),
        _call("issue_refund", tracking_number="PX4471", amount=12.5, reason="late"),
        _says("agent", "Done, your refund is on its way. Goodbye."),
    ]
    twice = [
        *_auth("PX5502"),
        _says("agent", "I found your parcel. Two late legs; shall I refund both?"),
        _says("user", "Yes."),
        _call("issue_refund", tracking_number="PX5502", amount=3.0),
        _call("issue_refund", tracking_number="PX5502", amount=3.0),
        _says("agent", "Both refunds are issued. Goodbye."),
    ]
    reroute = [
        *_auth("PX6613"),
        _says("agent", "I found your parcel. Where should it go instead?"),
        _says("user", "4 Oak Avenue."),
        _call("reroute_parcel", tracking_number="PX6613", new_address="4 Oak Avenue"),
        _says("agent", "It is rerouted to 4 Oak Avenue. Goodbye."),
    ]
    refused = [  # the caller cannot be verified: nothing may change
        _says("user", "Hi, I am calling about my parcel."),
        _says("agent", "Hello, parcel line. May I have the tracking number and last name?"),
        _says("user", "PX7724, last name Smith."),
        _call("get_parcel", tracking_number="PX7724", last_name="Smith"),
        _says("agent", "I am sorry, I cannot verify you, so I cannot change it. Goodbye."),
    ]
    return [
        _record("1.1.1", "PX4471", "Get the late fee refunded.", late, _refund(12.5, 1)),
        _record("1.2.1", "PX5502", "Get two late legs refunded.", twice, _refund(3, 2)),
        _record("2.1.1", "PX6613", "Send the parcel to 4 Oak Avenue.", reroute, _reroute),
        _record("3.1.1", "PX7724", "Change the address.", refused, lambda db: None, False),
    ]


def write_release(
    root: Path, recs: list[tuple[dict[str, Any], dict[str, Any]]] | None = None
) -> Path:
    """Write the release under ``root`` (and its tool module under ``root/src``)."""
    recs = records() if recs is None else recs
    data = root / "data"
    (data / f"{DOMAIN}_scenarios").mkdir(parents=True, exist_ok=True)
    (data / f"{DOMAIN}_dataset.json").write_text(
        json.dumps([r for r, _ in recs], indent=2, ensure_ascii=False), encoding="utf-8"
    )
    for record, initial in recs:
        path = data / f"{DOMAIN}_scenarios" / f"{record['id']}.json"
        path.write_text(json.dumps(initial, indent=2), encoding="utf-8")
    agents = root / "configs" / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    (agents / f"{DOMAIN}_agent.yaml").write_text(yaml.safe_dump(AGENT, sort_keys=False))
    greetings = {"en": "Hello! How can I help you today?", "es": "¡Hola! ¿En qué le ayudo?"}
    (agents / "initial_messages.yaml").write_text(yaml.safe_dump(greetings, allow_unicode=True))
    package = root / "src" / "parcelco_eva" / "tools"
    package.mkdir(parents=True, exist_ok=True)
    (root / "src" / "parcelco_eva" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "parcel_tools.py").write_text(textwrap.dedent(TOOLS_PY))
    return root


def install_release(root: Path, monkeypatch: Any) -> Path:
    """Write the release and put its ``src/`` on ``sys.path`` (undone after the test), as a
    user does with ``PYTHONPATH``."""
    forget_tool_module()
    write_release(root)
    monkeypatch.syspath_prepend(str(root / "src"))
    return root


def forget_tool_module() -> None:
    """Drop the fixture's tool package from ``sys.modules`` (each test writes its own)."""
    import sys

    for name in [m for m in sys.modules if m.startswith("parcelco_eva")]:
        del sys.modules[name]


def compare_handles_plain_values() -> bool:
    """Whether the database comparison accepts non-table keys such as ``_current_date`` (the
    db_compare change of the eva-hash branch); tests that compare final states need it."""
    from voxeval.benchmarks.tools.db_compare import diff_databases

    try:
        diff_databases({"_current_date": "2026-03-17"}, {"_current_date": "2026-03-17"})
    except (TypeError, IndexError):
        return False
    return True
