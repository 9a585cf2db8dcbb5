"""The report's latency-basis line of a system: whether its latencies were measured or
modelled, and the share voxeval's declared rendering model added (``summary[system]
["latency_basis"]``, written by ``voxeval.protocols.latency_basis``)."""

from __future__ import annotations

from collections.abc import Mapping

from voxeval.json_types import JSONReadObject, JSONReadValue
from voxeval.report.blocks import Block, Heading, Paragraph
from voxeval.report.json_fields import number, objects


def latency_basis_blocks(basis: JSONReadValue) -> list[Block]:
    """The block for a summary entry's ``latency_basis`` (none when absent)."""
    if not isinstance(basis, Mapping):
        return []
    return [Heading(3, "Latency basis"), Paragraph(basis_line(basis))]


def basis_line(basis: JSONReadObject) -> str:
    """One sentence: measured or modelled, and the rendering share."""
    agent = basis.get("agent")
    if agent == "measured":
        own = basis.get("measured_by") in ("agent", "system")
        who = "the system under test (its own timings)" if own else "voxeval"
        lane = (
            " in the compute lane (independent of parallel calls)"
            if basis.get("compute_lane")
            else ""
        )
        text = f"Latencies: measured by {who}{lane}"
    elif agent == "modelled":
        text = "Latencies: modelled (simulation.latency_model), not measured"
    else:
        text = f"Latencies: {agent} (measured in some calls, modelled in others)"
    clock = basis.get("clock")
    if clock == "wall":
        text += "; the calls ran in real time (wall clock), timings as they happened"
    elif clock == "mixed":
        text += "; some calls ran in real time (wall clock), others on the virtual clock"
    left_out = basis.get("calls_without_agent_compute") or 0
    if left_out:
        calls = basis.get("calls")
        of = f" of {calls}" if calls else ""
        text += (
            f"; in {left_out}{of} call(s) the agent ran on the virtual clock, so its latencies "
            "count its own waits (voice-activity timeouts, timers) but not its models' compute "
            "time (run it with clock: wall to measure that)"
        )
    rendering = basis.get("rendering_by_voxeval")
    if isinstance(rendering, dict):
        models = "; ".join(
            f"{m.get('first_audio_ms', 0):g} ms to first audio + {m.get('per_char_ms', 0):g} "
            "ms per character"
            for m in objects(rendering.get("models"))
        )
        share = number(rendering.get("share"))
        share_text = "" if share is None else f", {share * 100:.1f}% of reply latency"
        text += (
            f"; rendering by voxeval: modelled ({models}) on {rendering.get('replies', 0)} "
            f"replies{share_text}"
        )
    else:
        text += "; no rendering by voxeval"
    unknown = basis.get("calls_without_record") or 0
    if unknown:
        text += f"; {unknown} call(s) recorded without a latency basis"
    return text + "."
