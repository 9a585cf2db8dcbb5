"""Each figure family drawn from a hand-made summary: one element (with a known id) per bar,
point, line, cell or polygon, the labels a reader needs, and no figure where data are absent."""

from __future__ import annotations

from typing import Any

from tests.report.figure_summaries import live_call_summary, multi_turn_summary, single_turn_summary
from tests.report.svg_checks import ids_with_prefix, labels
from voxeval.report.figures import Figure, build_figures


def drawn_and_said(summary: dict[str, Any]) -> tuple[dict[str, Figure], dict[str, list[str]]]:
    """The figures by name, and the notes by heading."""
    groups = build_figures(summary)
    drawn = {f.name: f for group in groups for f in group.figures}
    return drawn, {g.heading: g.notes for g in groups if g.notes}


def figures(summary: dict[str, Any]) -> dict[str, Figure]:
    return drawn_and_said(summary)[0]


def test_single_turn_families() -> None:
    drawn = figures(single_turn_summary())
    assert set(drawn) == {
        "category-bars-checklist",
        "category-bars-wer",
        "condition-bars-checklist",
        "noise-impact-checklist",
        "radar-category-checklist",
        "mos-distribution",
        "latency-histogram-total-s",
    }
    bars = drawn["category-bars-checklist"].svg
    assert len(ids_with_prefix(bars, "category-bars-checklist-bar-")) == 2 * 3
    assert ids_with_prefix(bars, "category-bars-checklist-bar-beta-sr") == [
        "category-bars-checklist-bar-beta-sr"
    ]
    assert {"PF", "SR", "OE", "alpha", "beta", "checklist"} <= labels(bars)
    # conditions run clean first; one line and three points per system
    noise = drawn["noise-impact-checklist"].svg
    assert len(ids_with_prefix(noise, "noise-impact-checklist-line-")) == 2
    assert len(ids_with_prefix(noise, "noise-impact-checklist-point-")) == 2 * 3
    assert {"clean", "babble", "street", "condition"} <= labels(noise)
    radar = drawn["radar-category-checklist"].svg
    assert len(ids_with_prefix(radar, "radar-category-checklist-polygon-")) == 2
    gap = single_turn_summary()
    del gap["systems"]["beta"]["by_category"]["SR"]["checklist"]
    partial = figures(gap)["radar-category-checklist"]  # beta lacks a corner: not drawn
    assert ids_with_prefix(partial.svg, "radar-category-checklist-polygon-") == [
        "radar-category-checklist-polygon-alpha"
    ]
    assert partial.description.endswith("Not drawn (a mean missing on some axis): beta.")
    mos = drawn["mos-distribution"]
    assert len(ids_with_prefix(mos.svg, "mos-distribution-hist-")) == 2
    assert {"alpha (n=5)", "beta (n=5)"} <= labels(mos.svg)
    latency = drawn["latency-histogram-total-s"]
    # the value above the bins is listed, not lost
    assert ["alpha", "above range", "above range", 1] in latency.table.rows


def test_live_call_families() -> None:
    drawn = figures(live_call_summary())
    passk = drawn["passk-curves"].svg
    assert len(ids_with_prefix(passk, "passk-curves-line-")) == 3 * 2  # pass@k and pass^k
    assert len(ids_with_prefix(passk, "passk-curves-point-fast-pass-k-")) == 2 * 3
    assert {"fast pass@k", "careful pass^k", "k (trials drawn)"} <= labels(passk)
    pareto = drawn["eva-pareto"]
    assert len(ids_with_prefix(pareto.svg, "eva-pareto-point-")) == 3
    assert ids_with_prefix(pareto.svg, "eva-pareto-front") == ["eva-pareto-front"]
    # fast (0.5, 0.8) and careful (0.8, 0.5) trade off; weak (0.4, 0.4) is dominated
    front = {row[0]: row[-1] for row in pareto.table.rows}
    assert front == {"fast": "yes", "careful": "yes", "weak": "no"}
    by_turn = drawn["latency-by-turn-response-latency-s"].svg
    assert len(ids_with_prefix(by_turn, "latency-by-turn-response-latency-s-point-")) == 3 * 3
    assert {"T1", "T2", "T3", "answered turn of the call"} <= labels(by_turn)


def test_multi_turn_families() -> None:
    drawn = figures(multi_turn_summary())
    assert {"radar-rubric-dimensions", "rubric-per-turn"} <= set(drawn)
    capabilities = drawn["radar-rubric-capabilities"]
    assert len(ids_with_prefix(capabilities.svg, "radar-rubric-capabilities-polygon-")) == 2
    assert {"ambient-1", "semantic-2"} <= labels(capabilities.svg)
    assert len(capabilities.table.rows) == 2 * 3 * 2  # systems x dimensions x capabilities
    heat = drawn["arena-win-rates-ambient"].svg
    assert ids_with_prefix(heat, "arena-win-rates-ambient-cell-") == [
        "arena-win-rates-ambient-cell-one-two",
        "arena-win-rates-ambient-cell-two-one",
    ]  # the diagonal is blank
    assert {"0.69", "0.31", "n=8", "opponent"} <= labels(heat)  # ties count half: 5.5 / 8
    forest = drawn["arena-bradley-terry-ambient"].svg
    assert len(ids_with_prefix(forest, "arena-bradley-terry-ambient-point-")) == 2
    assert "one  [rank 1 (1-2)]" in labels(forest)
    turns = drawn["rubric-per-turn"].svg
    assert len(ids_with_prefix(turns, "rubric-per-turn-point-")) == 2 * 3


def test_absent_data_draw_nothing_and_say_why() -> None:
    summary = single_turn_summary()
    for entry in summary["systems"].values():
        del entry["distributions"]
        entry["by_condition"] = {"clean": entry["by_condition"]["clean"]}
    drawn, said = drawn_and_said(summary)
    assert not any(n.startswith(("mos", "latency", "noise")) for n in drawn)
    assert said["MOS distribution"] == ["Not drawn: the mos metric was not scored in this run."]
    assert said["Noise impact"] == ["Not drawn: the run scored a single condition."]
    assert said["Latency"] == ["Not drawn: no reply timings were stored in this run."]

    drawn, said = drawn_and_said(live_call_summary(claimed=False))
    assert "eva-pareto" not in drawn
    assert said["Accuracy against experience (EVA-A vs EVA-X)"][0].startswith(
        "Not drawn: no system has both EVA-A and EVA-X claimed"
    )
    no_arena = multi_turn_summary()
    del no_arena["arena"]
    assert drawn_and_said(no_arena)[1]["Arena"] == ["Not drawn: this run has no arena comparisons."]
