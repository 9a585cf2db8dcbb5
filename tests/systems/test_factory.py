"""``open_call``: a system's own sessions (``OpensCalls``), else a turn system in the adapter,
else a refusal naming the system."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from tests.simulation.parties import ListAgent
from voxeval.errors import ConfigError
from voxeval.json_types import JSONObject
from voxeval.systems.base import CALL, REPLY, Reply, SystemBase, Turn
from voxeval.systems.factory import open_call
from voxeval.systems.turn_call import TurnSystemCall


class _Named(SystemBase):
    def __init__(self, name: str) -> None:
        self.name = name

    @classmethod
    def from_spec(cls, spec: Any, ctx: Any = None) -> Any:
        return cls(spec.name)

    def identity(self) -> JSONObject:
        return {"type": type(self).__name__}


class OwnSessions(_Named):
    capabilities = frozenset({CALL})

    def open_call(self) -> ListAgent:
        return ListAgent(["fine"])


class TurnOnly(_Named):
    capabilities = frozenset({REPLY, CALL})

    def reply(self, history: Sequence[Turn]) -> Reply:
        return Reply(audio=None, text="fine")


class RepliesOnly(TurnOnly):
    capabilities = frozenset({REPLY})  # declares no CALL: not put in the adapter


def test_open_call_takes_the_systems_own_session_else_the_adapter() -> None:
    first, second = open_call(OwnSessions("own")), open_call(OwnSessions("own"))
    assert isinstance(first, ListAgent) and first is not second
    session = open_call(TurnOnly("turns"))
    assert isinstance(session, TurnSystemCall)
    assert session.respond(None, "hello").text == "fine"


def test_a_system_that_cannot_hold_a_call_is_refused_by_name() -> None:
    with pytest.raises(ConfigError, match="system 'no-calls' cannot hold a live call"):
        open_call(RepliesOnly("no-calls"))
