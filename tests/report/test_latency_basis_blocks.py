from voxeval.report.blocks import Heading, Paragraph
from voxeval.report.latency_basis_blocks import basis_line, latency_basis_blocks


def test_measured_with_rendering_share() -> None:
    basis = {
        "agent": "measured",
        "measured_by": "voxeval",
        "compute_lane": True,
        "rendering_by_voxeval": {
            "models": [{"first_audio_ms": 250.0, "per_char_ms": 0.0}],
            "replies": 12,
            "seconds": 3.0,
            "share": 0.1834,
        },
    }
    assert basis_line(basis) == (
        "Latencies: measured by voxeval in the compute lane (independent of parallel calls); "
        "rendering by voxeval: modelled (250 ms to first audio + 0 ms per character) on 12 "
        "replies, 18.3% of reply latency."
    )


def test_single_turn_and_mixed() -> None:
    own = {"agent": "measured", "measured_by": "system", "rendering_by_voxeval": None}
    assert basis_line(own) == (
        "Latencies: measured by the system under test (its own timings); no rendering by voxeval."
    )
    mixed = {"agent": "mixed", "rendering_by_voxeval": None, "calls_without_record": 2}
    assert basis_line(mixed).startswith("Latencies: mixed (measured in some calls")
    assert basis_line(mixed).endswith("; 2 call(s) recorded without a latency basis.")


def test_blocks() -> None:
    assert latency_basis_blocks(None) == []
    blocks = latency_basis_blocks({"agent": "modelled", "rendering_by_voxeval": None})
    assert isinstance(blocks[0], Heading) and isinstance(blocks[1], Paragraph)


def test_real_time_calls_are_said_so() -> None:
    wall = {"agent": "measured", "measured_by": "agent", "clock": "wall"}
    assert basis_line(wall) == (
        "Latencies: measured by the system under test (its own timings); the calls ran in "
        "real time (wall clock), timings as they happened; no rendering by voxeval."
    )
    assert "some calls ran in real time" in basis_line({**wall, "clock": "mixed"})
    assert "real time" not in basis_line({**wall, "clock": "virtual"})


def test_calls_on_virtual_time_without_compute_say_inference_is_left_out() -> None:
    basis = {
        "agent": "measured",
        "measured_by": "agent",
        "clock": "virtual",
        "calls": 3,
        "calls_without_agent_compute": 3,
    }
    line = basis_line(basis)
    assert "in 3 of 3 call(s) the agent ran on the virtual clock" in line
    assert "not its models' compute time (run it with clock: wall to measure that)" in line
    assert "virtual clock" not in basis_line({**basis, "calls_without_agent_compute": 0})
