"""A tiny live-call suite written by the tests: one auth tool, one write tool, two scenarios."""

from __future__ import annotations

from pathlib import Path

import yaml

TOOLS = {
    "tools": [
        {
            "name": "verify_member",
            "kind": "auth",
            "parameters": {
                "type": "object",
                "properties": {
                    "member_id": {"type": "string"},
                    "date_of_birth": {"type": "string"},
                },
                "required": ["member_id", "date_of_birth"],
            },
            "steps": [
                {"lookup": {"table": "members", "key": "member_id", "as": "m"}},
                {"require": {"check": "m.dob == date_of_birth", "error": "mismatch"}},
                {"set_session": {"member_id": "${m.id}"}},
                {"return": {"status": "verified", "name": "${m.name}"}},
            ],
        },
        {
            "name": "book_visit",
            "kind": "write",
            "requires_auth": True,
            "parameters": {
                "type": "object",
                "properties": {"day": {"type": "string"}},
                "required": ["day"],
            },
            "steps": [
                {
                    "update": {
                        "table": "members",
                        "key": "session.member_id",
                        "set": {"visit": "${day}"},
                    }
                },
                {"return": {"status": "booked", "day": "${day}"}},
            ],
        },
    ]
}


def scenario(sid: str = "book-1", pauses: bool = False) -> dict:
    opening = "Hi, I would like to book a visit" + (" ... for Friday please." if pauses else ".")
    return {
        "id": sid,
        "category": "single_intent",
        "current_date_time": "2026-03-02T09:00:00",
        "user_goal": {
            "high_level_user_goal": "Book a visit on Friday.",
            "decision_tree": {
                "must_have_criteria": ["The visit is on Friday."],
                "negotiation_behavior": ["Decline any offer of a reminder text message."],
            },
            "information_required": {"member_id": "KX4", "date_of_birth": "1980-05-01"},
            "starting_utterance": opening,
        },
        "user_persona": "A busy parent.",
        "initial_db": {
            "members": {"KX4": {"id": "KX4", "dob": "1980-05-01", "name": "Ann", "visit": None}}
        },
        "expected_db": {
            "members": {
                "KX4": {"id": "KX4", "dob": "1980-05-01", "name": "Ann", "visit": "friday"}
            },
            "session": {"member_id": "KX4"},
        },
        "agent": {
            "role": "Clinic receptionist",
            "instructions": "Verify the member before booking.",
            "tools": ["verify_member", "book_visit"],
            "greeting": "Hello, clinic line, how can I help you?",
        },
        "agent_script": [
            {"say": "Sure. What is your member ID and date of birth?"},
            {
                "say": "Thank you, you are verified. Shall I book Friday?",
                "tool_calls": [
                    {
                        "name": "verify_member",
                        "arguments": {"member_id": "KX4", "date_of_birth": "1980-05-01"},
                    }
                ],
            },
            {
                "say": "Your visit is booked for Friday. Goodbye.",
                "tool_calls": [{"name": "book_visit", "arguments": {"day": "friday"}}],
            },
        ],
    }


def write_suite(root: Path, scenarios: list[dict] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "tools.yaml").write_text(yaml.safe_dump(TOOLS), encoding="utf-8")
    suite = {
        "protocol": "live_call",
        "name": "mini-calls",
        "domain": "tools.yaml",
        "scenarios": scenarios or [scenario()],
    }
    path = root / "suite.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False), encoding="utf-8")
    return path
