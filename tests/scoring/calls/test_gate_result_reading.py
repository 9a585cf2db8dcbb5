"""Reading a stored gate result back (``validation.json``)."""

import pytest

from voxeval.scoring.calls.simulation_gates import GateResult
from voxeval.scoring.score import Score


def test_a_gate_result_round_trips():
    gate = GateResult(
        "user_speech", "fail", "turn 1 missed", {"decided_by": "x"}, {"m": Score(0.5, False)}
    )
    assert GateResult.from_dict("user_speech", gate.to_dict()) == gate
    empty = GateResult.from_dict("valid_end", {"status": "pass", "metrics": None})
    assert empty.scores == {} and empty.details == {}


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"status": "passed"}, "status"),
        ({"status": "pass", "reason": 3}, "reason"),
        ({"status": "pass", "metrics": ["m"]}, "metrics"),
        ({"status": "pass", "metrics": {"m": 1}}, "metrics.m"),
    ],
)
def test_a_malformed_entry_names_the_gate_and_field(data, field):
    with pytest.raises(ValueError, match=f"gate user_speech: {field}"):
        GateResult.from_dict("user_speech", data)
