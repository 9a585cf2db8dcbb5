"""Hand-made summaries (the shapes the protocols write to summary.json) for the figure tests:
two systems each, with every section a figure family draws from."""

from __future__ import annotations

from typing import Any


def stat(mean: float, half: float | None = 0.1, n: int = 6) -> dict[str, Any]:
    if half is None:
        return {
            "mean": mean,
            "ci_low": None,
            "ci_high": None,
            "n": n,
            "ci_note": "all values equal",
        }
    return {"mean": mean, "ci_low": mean - half, "ci_high": mean + half, "n": n}


def hist(counts: list[int], edges: list[float], above: int = 0) -> dict[str, Any]:
    return {"edges": edges, "counts": counts, "below": 0, "above": above,
            "n": sum(counts) + above}  # fmt: skip


LATENCY_EDGES = [0.0, 0.5, 1.0, 1.5, 2.0]
MOS_EDGES = [1.0 + 0.25 * i for i in range(17)]


def single_turn_entry(shift: float) -> dict[str, Any]:
    categories = {"PF": 0.6, "SR": 0.5, "OE": 0.7}
    conditions = {"clean": 0.7, "babble": 0.55, "street": 0.4}
    mos = [0] * 16
    mos[8 + int(shift * 10)] = 3
    mos[10] = 2
    return {
        "overall": {"checklist": stat(0.6 + shift), "wer": stat(0.2 - shift, None)},
        "by_category": {
            c: {"checklist": stat(m + shift), "wer": stat(0.2)} for c, m in categories.items()
        },
        "by_condition": {c: {"checklist": stat(m + shift, 0.05)} for c, m in conditions.items()},
        "distributions": {
            "mos": hist(mos, MOS_EDGES),
            "latency": {"total_s": {**hist([1, 3, 1, 0], LATENCY_EDGES, above=1), "unit": "s"}},
        },
        "statistics": {"unit": "query", "resamples": 2000, "confidence": 0.95},
    }


def single_turn_summary() -> dict[str, Any]:
    return {
        "run_id": "st",
        "suite": {"name": "demo", "protocol": "single_turn"},
        "seed": 0,
        "systems": {"alpha": single_turn_entry(0.0), "beta": single_turn_entry(0.1)},
    }


def curve(values: list[float]) -> list[dict[str, Any]]:
    return [{"k": k, **stat(v, 0.05, 4)} for k, v in enumerate(values, 1)]


def composite(pass_at_1: float, claimed: bool = True) -> dict[str, Any]:
    block = {"claimed": claimed, "n_scenarios": 4, "trials": 12}
    if claimed:
        block["pass_at_1"] = stat(pass_at_1, 0.1, 4)
    return {"label": "X", "definition": "d", "by_condition": {"clean": block}}


def live_call_entry(a: float, x: float, claimed: bool = True) -> dict[str, Any]:
    return {
        "overall": {"task_completion": stat(a)},
        "by_condition": {
            "clean": {"task_completion": stat(a)},
            "noisy": {"task_completion": stat(a - 0.2)},
        },
        "pass_at_k": curve([a, a + 0.1, a + 0.15]),
        "pass_hat_k": curve([a, a - 0.2, a - 0.3]),
        "composites": {"eva_a": composite(a, claimed), "eva_x": composite(x)},
        "distributions": {
            "latency": {"response_latency_s": {**hist([2, 5, 2, 1], LATENCY_EDGES), "unit": "s"}},
            "latency_by_turn": {
                "response_latency_s": {"T1": stat(0.8), "T2": stat(0.9), "T3": stat(1.1, None)}
            },
        },
    }


def live_call_summary(claimed: bool = True) -> dict[str, Any]:
    return {
        "run_id": "lc",
        "suite": {"name": "calls", "protocol": "live_call"},
        "seed": 0,
        "systems": {
            "fast": live_call_entry(0.5, 0.8, claimed),
            "careful": live_call_entry(0.8, 0.5, claimed),
            "weak": live_call_entry(0.4, 0.4, claimed),
        },
    }


def rubric(shift: float) -> dict[str, Any]:
    dims = {"ambient": 60.0, "paralinguistic": 50.0, "semantic": 70.0}
    return {
        "model_score": stat(60.0 + shift, 5.0),
        "by_dimension": {
            d: {
                "model_score": stat(v + shift, 5.0),
                "by_capability": {f"{d}-{c}": stat(v + shift + 3 * c, 6.0, 2) for c in (1, 2)},
            }
            for d, v in dims.items()
        },
        "turns": {
            "T1": stat(70.0 + shift, 4.0),
            "T2": stat(62.0 + shift, 4.0),
            "T3": stat(55.0 + shift, 4.0),
        },
    }


def win_record(wins: int, ties: int, losses: int) -> dict[str, Any]:
    n = wins + ties + losses
    return {"wins": wins, "ties": ties, "losses": losses, "n": n, "win_rate": (wins + ties / 2) / n}


def multi_turn_summary() -> dict[str, Any]:
    bt = {
        "systems": {
            "one": {
                "rating": 0.4,
                "ci_low": 0.1,
                "ci_high": 0.7,
                "rank": 1,
                "rank_low": 1,
                "rank_high": 2,
                "battles": 8,
            },
            "two": {
                "rating": -0.4,
                "ci_low": -0.7,
                "ci_high": -0.1,
                "rank": 2,
                "rank_low": 1,
                "rank_high": 2,
                "battles": 8,
            },
        },
        "anchor": None,
    }
    return {
        "run_id": "mt",
        "suite": {"name": "dialogues", "protocol": "multi_turn"},
        "seed": 0,
        "systems": {
            "one": {"overall": {"rubric": stat(0.6)}, "rubric": rubric(5.0)},
            "two": {"overall": {"rubric": stat(0.5)}, "rubric": rubric(-5.0)},
        },
        "arena": {
            "unit": "dialogue",
            "dimensions": {
                "ambient": {
                    "n_battles": 8,
                    "win_matrix": {
                        "one": {"two": win_record(5, 1, 2)},
                        "two": {"one": win_record(2, 1, 5)},
                    },
                    "bt": bt,
                }
            },
        },
    }
