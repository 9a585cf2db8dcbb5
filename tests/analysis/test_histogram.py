"""Fixed-bin histograms: counts per bin, out-of-range values kept in below/above, and shared
edges chosen from a ladder of round widths."""

from __future__ import annotations

from voxeval.analysis.histogram import MAX_BINS, MOS_EDGES, fixed_histogram, shared_edges


def test_counts_and_out_of_range_values() -> None:
    hist = fixed_histogram([0.1, 0.5, 0.99, 1.0, 2.0, 2.5, -1.0, float("nan")], [0.0, 1.0, 2.0])
    # [0, 1) holds 0.1, 0.5, 0.99; the last bin [1, 2] is closed: 1.0 and 2.0
    assert hist == {"edges": [0.0, 1.0, 2.0], "counts": [3, 2], "below": 1, "above": 1, "n": 7}


def test_mos_edges_cover_one_to_five_in_quarters() -> None:
    hist = fixed_histogram([1.0, 3.1, 5.0], MOS_EDGES)
    assert len(hist["counts"]) == 16 and hist["counts"][0] == 1 and hist["counts"][-1] == 1
    assert hist["counts"][8] == 1  # 3.1 is in [3.0, 3.25)


def test_shared_edges_pick_a_round_width() -> None:
    # the 99th percentile (about 1.68 s) fits 40 bins of 0.05 s, not of 0.02 s
    edges = shared_edges([[0.3, 0.9], [1.7]])
    assert edges[:3] == [0.0, 0.05, 0.1] and edges[-1] == 1.7 and len(edges) - 1 == 34
    slow = shared_edges([[30.0, 90.0]])
    assert slow[1] == 5.0 and len(slow) - 1 <= MAX_BINS
    assert shared_edges([]) == [round(0.05 * i, 6) for i in range(21)]  # 0..1 s by default
    assert shared_edges([[0.0]]) == [0.0, 0.001]
