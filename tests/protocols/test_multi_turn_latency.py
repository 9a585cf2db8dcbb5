"""The multi-turn summary's latency distributions come from the reply timings stored in each
done dialogue's ``dialogue.json``: a histogram per timing field and a mean per turn."""

from __future__ import annotations

import json
from pathlib import Path

from tests.protocols.arena.arena_runs import arena_context
from voxeval.protocols.arena.inputs import DIALOGUE_FILE
from voxeval.protocols.multi_turn_summary import summarize_multi_turn


def test_reply_timings_give_histograms_and_turn_means(tmp_path: Path) -> None:
    replies = {
        ("d1", "a"): ["good one", "good two"],
        ("d2", "a"): ["good three", "good four"],
        ("d1", "b"): ["plain", "plain"],
    }
    ctx, units = arena_context(tmp_path, replies, rubric={key: 0.5 for key in replies})
    seconds = {"d1": [0.4, 1.0], "d2": [0.6, 1.4]}
    for unit in units:
        path = ctx.store.folder.unit_dir(unit) / DIALOGUE_FILE
        stored = json.loads(path.read_text())
        for turn, value in zip(stored["turns"], seconds[unit.item_id], strict=True):
            turn["timing"] = {"total_s": value, "wall_s": value + 0.1}
        if unit.system == "b":
            stored["turns"][1]["reply_text"] = None  # never answered: no latency
        path.write_text(json.dumps(stored))
    summary = summarize_multi_turn(ctx, ["rubric"], {})
    a = summary["a"]["distributions"]
    assert a["latency"]["total_s"]["n"] == 4 and a["latency"]["wall_s"]["n"] == 4
    by_turn = a["latency_by_turn"]["total_s"]
    assert by_turn["T1"]["mean"] == 0.5 and by_turn["T2"]["mean"] == 1.2
    assert by_turn["T1"]["clusters"] == 2  # the dialogues are the independent units
    b = summary["b"]["distributions"]
    assert b["latency"]["total_s"]["n"] == 1 and list(b["latency_by_turn"]["total_s"]) == ["T1"]
    # both systems' histograms share their edges
    assert b["latency"]["total_s"]["edges"] == a["latency"]["total_s"]["edges"]
