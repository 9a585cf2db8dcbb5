"""The report's Costs section: totals, per-unit cost, the table used and what is unpriced."""

from __future__ import annotations

from voxeval.report.markdown import render_markdown

COSTS = {
    "currency": "USD",
    "prices": {"sources": [{"file": "my.yaml", "as_of": "2025-06-01", "example": True}]},
    "total": {"cost_usd": 0.5, "complete": False, "units": 4, "cost_per_unit_usd": 0.125},
    "by_system": {
        "live": {
            "cost_usd": 0.5,
            "complete": False,
            "units": 4,
            "cost_per_unit_usd": 0.125,
            "by_component": {"judge": {"cost_usd": 0.5, "complete": True}},
        }
    },
    "by_model": {
        "llm:openai:judge": {
            "price": "llm:openai:judge",
            "cost_usd": 0.5,
            "calls": 8,
            "prompt_tokens": 1000,
            "completion_tokens": 100,
            "audio_in_s": 0.0,
            "audio_out_s": 0.0,
        },
        "system:http": {"price": None, "cost_usd": None, "calls": 4, "audio_in_s": 6.0},
    },
    "unpriced": {"system:http": {"components": ["system:live"], "calls": 4}},
}


def test_costs_section_shows_totals_per_unit_and_unpriced() -> None:
    summary = {"run_id": "r", "suite": {"name": "s"}, "systems": {}, "costs": COSTS}
    md = render_markdown(summary)
    assert "## Costs" in md
    assert "my.yaml (as of 2025-06-01) — example prices, check them" in md
    assert "Total $0.5000 + unpriced for 4 units ($0.1250 per unit)" in md
    assert "| live | 4 | $0.5000 + unpriced | $0.1250 | judge $0.5000 |" in md
    assert "| llm:openai:judge | 8 | 1000/100 | 0/0 | 0.0/0.0 | $0.5000 |" in md
    assert "| system:http | 4 | 0/0 | 0/0 | 6.0/0.0 | unpriced |" in md
    assert "- system:http — used by system:live: 4 calls" in md


def test_no_costs_no_section() -> None:
    md = render_markdown({"run_id": "r", "suite": {"name": "s"}, "systems": {}})
    assert "Costs" not in md
