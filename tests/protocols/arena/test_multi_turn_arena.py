"""The arena comparison step against a real run folder and a loopback judge that prefers
replies saying "good": both orders judged, ties, order disagreements counted, parse failures
counted, missing judge not_run, and ratings checked against hand computations."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, chat_text
from tests.protocols.arena.arena_runs import (
    arena_context,
    judge_spec,
    preferring_judge,
    shown_sides,
    write_dialogue,
)
from voxeval.analysis.ratings.arena_pairing import closest_pairs
from voxeval.analysis.ratings.elo import online_elo
from voxeval.api.context import RunContext
from voxeval.audio import Audio, read_audio, write_audio
from voxeval.config import RunConfig
from voxeval.errors import ConfigError
from voxeval.protocols.arena.multi_turn_arena import (
    ARENA,
    LABELS,
    arena_audio_folder,
    arena_comparisons,
    arena_options,
    battles_of,
    check_arena,
    compare_arena,
    summarize_arena,
)
from voxeval.protocols.comparison import Comparison
from voxeval.scoring.comparison_result import ComparisonResult
from voxeval.store.layout import safe_name


@pytest.fixture
def judge_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(preferring_judge) as server:
        yield server


def run_all(ctx: RunContext, comparisons: list[Comparison]) -> dict[str, ComparisonResult]:
    results = {}
    for comparison in comparisons:
        result = compare_arena(comparison, ctx)
        ctx.store.comparisons.save(comparison.step, comparison.key, comparison.unit_keys, result)
        results[comparison.key] = result
    return results


# -- options and planning ---------------------------------------------------------------------


def config_with(arena: Any, systems: int = 2) -> RunConfig:
    return RunConfig(
        suite="x",
        systems=[{"name": f"s{i}", "type": "scripted"} for i in range(systems)],
        scoring={"arena": arena},
    )


def test_options_are_validated_naming_the_field() -> None:
    problems = check_arena(config_with({"pairing": "sometimes"}), [ARENA])
    assert len(problems) == 1
    assert "scoring.arena" in problems[0] and "pairing" in problems[0]
    with pytest.raises(ConfigError, match="mode"):
        arena_options(config_with({"mode": "video"}))
    assert check_arena(config_with({"anchor": "s9"}), [ARENA]) == [
        "config scoring.arena.anchor: 's9' is not a system of the run"
    ]
    assert "needs two or more" in check_arena(config_with({}, systems=1), [ARENA])[0]
    assert check_arena(config_with({"pairing": "sometimes"}), []) == []
    defaults = arena_options(config_with({}))
    assert (defaults.pairing, defaults.mode, defaults.disagreement) == ("all", "transcript", "tie")


def test_all_pairs_have_stable_keys_and_seeded_orders(tmp_path: Path) -> None:
    replies = {(d, s): ["good"] for d in ("d1", "d2") for s in ("x", "y", "z")}
    ctx, units = arena_context(tmp_path, replies)
    first = arena_comparisons(ctx, units)
    again = arena_comparisons(ctx, list(reversed(units)))
    assert sorted(c.key for c in first) == sorted(c.key for c in again)
    assert {c.key: c.unit_keys for c in first} == {c.key: c.unit_keys for c in again}
    assert sorted(c.key for c in first) == [
        f"{d}|ambient|0|{x}|{y}"
        for d in ("d1", "d2")
        for x, y in (("x", "y"), ("x", "z"), ("y", "z"))
    ]
    for comparison in first:
        shown = {u.system for u in comparison.units}
        assert shown == set(comparison.key.split("|")[3:])
        assert len({u.item_id for u in comparison.units}) == 1
    # the order is random (seeded by the key): over these 6 keys both orders occur
    orders = [c.key.split("|")[3] == c.units[0].system for c in first]
    assert any(orders) and not all(orders)


def test_adaptive_pairing_plans_a_batch_that_links_every_system(tmp_path: Path) -> None:
    systems = ("w", "x", "y", "z")
    replies = {(f"d{n}", s): ["good"] for n in range(6) for s in systems}
    ctx, units = arena_context(tmp_path, replies, arena={"pairing": "adaptive"})
    planned = arena_comparisons(ctx, units)
    # one batch (4 dialogues) before any verdict: the rest waits for its verdicts
    assert [c.units[0].item_id for c in planned] == ["d0", "d1", "d2", "d3"]
    pairs = [frozenset(u.system for u in c.units) for c in planned]
    # coverage first: two pairs of never-compared systems, then one joining the two groups
    assert pairs[0] in {frozenset(p) for p in (("w", "x"), ("w", "y"), ("w", "z"))}
    assert not pairs[1] & pairs[0]
    assert pairs[2] & pairs[0] and pairs[2] & pairs[1]
    # all linked, all ratings equal: the reference's 3 closest pairs, ties broken by names
    assert pairs[3] in {frozenset(p) for p in (("w", "x"), ("w", "y"), ("w", "z"))}
    again = arena_comparisons(ctx, units)
    assert [(c.key, c.unit_keys) for c in planned] == [(c.key, c.unit_keys) for c in again]


def test_adaptive_pairing_old_behaviour_left_systems_out(tmp_path: Path) -> None:
    """Regression: 7 systems, 4 dialogues planned before any verdict used to pair only the
    first systems by name; now the batch leaves no system out."""
    systems = [f"s{i}" for i in range(7)]
    replies = {(f"d{n}", s): ["good"] for n in range(4) for s in systems}
    ctx, units = arena_context(tmp_path, replies, arena={"pairing": "adaptive"})
    planned = arena_comparisons(ctx, units)
    assert {u.system for c in planned for u in c.units} == set(systems)


# -- judging ----------------------------------------------------------------------------------


def test_both_orders_are_judged_and_mapped_back_to_systems(
    tmp_path: Path, judge_server: FakeOpenAIServer
) -> None:
    replies = {
        ("d1", "alpha"): ["a good answer", "good again"],
        ("d1", "beta"): ["a poor answer", "still poor here"],
    }
    ctx, units = arena_context(tmp_path, replies, judge_url=judge_server.url)
    (comparison,) = arena_comparisons(ctx, units)
    result = compare_arena(comparison, ctx)
    assert result.is_done
    verdict = result.result
    requests = judge_server.posts("/chat/completions")
    assert len(requests) == 2
    first_a, first_b = shown_sides(requests[0].body)
    second_a, second_b = shown_sides(requests[1].body)
    text_of = {"alpha": "a good answer", "beta": "a poor answer"}
    # order 1 shows the comparison's A first; order 2 swaps the sides
    assert text_of[verdict["a"]] in first_a and text_of[verdict["b"]] in first_b
    assert text_of[verdict["b"]] in second_a and text_of[verdict["a"]] in second_b
    assert "[phone ringing]" in first_a  # the transcript keeps the annotations
    assert [o["winner"] for o in verdict["orders"]] == ["alpha", "alpha"]
    assert [o["label"] for o in verdict["orders"]] == (
        ["A", "B"] if verdict["a"] == "alpha" else ["B", "A"]
    )
    assert verdict["orders"][0]["shown_a"] == verdict["a"]
    assert verdict["orders"][1]["shown_a"] == verdict["b"]
    assert verdict["agreed"] is True and verdict["winner"] == "alpha"
    assert verdict["features"]["alpha"] == {"length": 5.0, "duration": 2.5}
    assert verdict["features"]["beta"] == {"length": 6.0, "duration": 3.0}
    assert verdict["accounting"]["judge_calls"] == 2
    assert verdict["accounting"]["parse_failures"] == 0
    assert verdict["orders"][0]["reason"].endswith("helped more")


def test_ties_and_order_disagreements(tmp_path: Path, judge_server: FakeOpenAIServer) -> None:
    replies = {
        ("both_good", "alpha"): ["good"],
        ("both_good", "beta"): ["good too"],
        ("both_poor", "alpha"): ["poor"],
        ("both_poor", "beta"): ["poor too"],
    }
    ctx, units = arena_context(tmp_path, replies, judge_url=judge_server.url)
    results = run_all(ctx, arena_comparisons(ctx, units))
    tie = results["both_good|ambient|0|alpha|beta"].result
    assert tie["agreed"] is True and tie["winner"] == "tie"
    split = results["both_poor|ambient|0|alpha|beta"].result
    # the judge always says A: each order names a different system
    assert {o["winner"] for o in split["orders"]} == {"alpha", "beta"}
    assert split["agreed"] is False and split["winner"] == "tie"
    counts = summarize_arena(ctx)["dimensions"]["ambient"]["comparisons"]
    assert counts["done"] == 2 and counts["order_disagreements"] == 1 and counts["dropped"] == 0
    assert summarize_arena(ctx)["dimensions"]["ambient"]["ties"] == 2


def test_disagreement_drop_leaves_the_verdict_out(
    tmp_path: Path, judge_server: FakeOpenAIServer
) -> None:
    replies = {
        ("d1", "alpha"): ["poor"],
        ("d1", "beta"): ["poor"],
        ("d2", "alpha"): ["good"],
        ("d2", "beta"): ["poor"],
    }
    ctx, units = arena_context(
        tmp_path, replies, judge_url=judge_server.url, arena={"disagreement": "drop"}
    )
    results = run_all(ctx, arena_comparisons(ctx, units))
    assert results["d1|ambient|0|alpha|beta"].result["winner"] is None
    summary = summarize_arena(ctx)["dimensions"]["ambient"]
    assert summary["n_battles"] == 1
    assert summary["comparisons"]["dropped"] == 1
    assert summary["comparisons"]["order_disagreements"] == 1


def test_parse_failures_are_retried_and_counted(tmp_path: Path) -> None:
    calls: list[int] = []

    def flaky(path: str, body: dict[str, Any]) -> FakeResponse:
        calls.append(1)
        if len(calls) == 1:
            return chat_text("I think A is better.")
        if len(calls) == 2:
            return chat_text(json.dumps({"winner": "A or B", "reason": "unsure"}))
        return preferring_judge(path, body)

    replies = {("d1", "alpha"): ["good"], ("d1", "beta"): ["poor"]}
    with FakeOpenAIServer(flaky) as server:
        ctx, units = arena_context(tmp_path, replies, judge_url=server.url)
        results = run_all(ctx, arena_comparisons(ctx, units))
    verdict = next(iter(results.values())).result
    assert verdict["winner"] == "alpha"
    assert verdict["accounting"]["parse_failures"] == 2
    assert verdict["accounting"]["judge_calls"] == 4
    assert summarize_arena(ctx)["dimensions"]["ambient"]["comparisons"]["parse_failures"] == 2


def test_a_judge_never_in_format_leaves_the_comparison_pending(tmp_path: Path) -> None:
    replies = {("d1", "alpha"): ["good"], ("d1", "beta"): ["poor"]}
    with FakeOpenAIServer(lambda path, body: chat_text("no json at all")) as server:
        ctx, units = arena_context(tmp_path, replies, judge_url=server.url)
        (comparison,) = arena_comparisons(ctx, units)
        result = compare_arena(comparison, ctx)
    assert result.status == "pending"
    assert "order 1" in (result.error or "")
    assert result.result["accounting"]["parse_failures"] == 3


def test_no_judge_is_not_run_with_the_reason(tmp_path: Path) -> None:
    replies = {("d1", "alpha"): ["good"], ("d1", "beta"): ["poor"]}
    ctx, units = arena_context(tmp_path, replies)
    (comparison,) = arena_comparisons(ctx, units)
    result = compare_arena(comparison, ctx)
    assert result.status == "not_run"
    assert result.cause == "judge" and "no judge configured" in (result.error or "")
    ctx.store.comparisons.save(ARENA, comparison.key, comparison.unit_keys, result)
    ambient = summarize_arena(ctx)["dimensions"]["ambient"]
    assert ambient["comparisons"]["not_run"] == 1 and ambient["n_battles"] == 0


def test_a_judge_that_is_down_leaves_the_comparison_pending(tmp_path: Path) -> None:
    with FakeOpenAIServer(preferring_judge) as server:
        url = server.url
    replies = {("d1", "alpha"): ["good"], ("d1", "beta"): ["poor"]}
    ctx, units = arena_context(tmp_path, replies, judge_url=url)
    (comparison,) = arena_comparisons(ctx, units)
    result = compare_arena(comparison, ctx)
    assert result.status == "pending"
    assert "arena judge" in (result.error or "")


def test_a_missing_dialogue_file_fails_naming_it(tmp_path: Path) -> None:
    replies = {("d1", "alpha"): ["good"], ("d1", "beta"): ["poor"]}
    ctx, units = arena_context(tmp_path, replies, judge_url="http://127.0.0.1:9/v1")
    (ctx.store.folder.unit_dir(units[1]) / "dialogue.json").unlink()
    (comparison,) = arena_comparisons(ctx, units)
    result = compare_arena(comparison, ctx)
    assert result.status == "failed" and result.cause == "input"
    assert "dialogue.json" in (result.error or "")


# -- summary ----------------------------------------------------------------------------------


def test_ratings_match_hand_computations(tmp_path: Path, judge_server: FakeOpenAIServer) -> None:
    # alpha wins d1 and d2, ties d3: alpha's score is 2.5 of 3
    replies = {
        ("d1", "alpha"): ["good"],
        ("d1", "beta"): ["poor"],
        ("d2", "alpha"): ["good"],
        ("d2", "beta"): ["poor"],
        ("d3", "alpha"): ["good"],
        ("d3", "beta"): ["good"],
    }
    ctx, units = arena_context(
        tmp_path, replies, judge_url=judge_server.url, arena={"resamples": 200}
    )
    run_all(ctx, arena_comparisons(ctx, units))
    summary = summarize_arena(ctx)
    assert summary["unit"] == "dialogue"
    ambient = summary["dimensions"]["ambient"]
    assert ambient["n_battles"] == 3 and ambient["ties"] == 1

    # Elo: init 1000, K 4, scale 400, base 10, replayed in key order (d1, d2, d3)
    alpha = beta = 1000.0
    for score in (1.0, 1.0, 0.5):
        expected = 1 / (1 + 10 ** ((beta - alpha) / 400))
        alpha, beta = alpha + 4 * (score - expected), beta - 4 * (score - expected)
    assert ambient["elo"]["alpha"] == pytest.approx(alpha, abs=1e-9)
    assert ambient["elo"]["beta"] == pytest.approx(beta, abs=1e-9)

    # Bradley-Terry with a tie as half a win: P(alpha beats beta) = 2.5 / 3, so the rating
    # gap is 400 log10(5) around 1000
    bt = ambient["bt"]["systems"]
    gap = 400 * math.log10(5)
    assert bt["alpha"]["rating"] - bt["beta"]["rating"] == pytest.approx(gap, rel=0.01)
    assert bt["alpha"]["rating"] + bt["beta"]["rating"] == pytest.approx(2000, abs=0.5)
    assert bt["alpha"]["ci_low"] <= bt["alpha"]["rating"] <= bt["alpha"]["ci_high"]
    assert bt["alpha"]["rank"] == 1
    assert ambient["win_matrix"]["alpha"]["beta"]["win_rate"] == pytest.approx(2.5 / 3)
    assert ambient["style_controlled"] is not None
    assert ambient["comparisons"]["done"] == 3


# -- audio mode -------------------------------------------------------------------------------

TONE_RATE = 16000


def tone(path: Path, hz: float, seconds: float = 0.6) -> str:
    t = np.arange(round(seconds * TONE_RATE)) / TONE_RATE
    write_audio(Audio((0.3 * np.sin(2 * np.pi * hz * t)).astype(np.float32), TONE_RATE), path)
    return str(path)


def peak_hz(samples: np.ndarray, rate: int) -> float:
    spectrum = np.abs(np.fft.rfft(samples))
    return float(np.fft.rfftfreq(samples.size, 1 / rate)[int(np.argmax(spectrum))])


def zero_runs(samples: np.ndarray, rate: int, at_least_s: float) -> list[tuple[float, float]]:
    """(start, length) in seconds of every run of exact zeros of at least ``at_least_s``."""
    silent = np.concatenate([[False], samples == 0, [False]])
    edges = np.flatnonzero(np.diff(silent.astype(np.int8)))
    runs = zip(edges[::2], edges[1::2], strict=True)
    return [(a / rate, (b - a) / rate) for a, b in runs if (b - a) / rate >= at_least_s]


def always_a(path: str, body: dict[str, Any]) -> FakeResponse:
    return chat_text(json.dumps({"winner": "A", "reason": "A sounded better"}))


@pytest.mark.models
def test_audio_mode_renders_one_file_per_order_with_timed_segments(tmp_path: Path) -> None:
    hz = {("alpha", 1): 300, ("alpha", 2): 400, ("beta", 1): 500, ("beta", 2): 600}
    reply_hz = {"alpha": 800, "beta": 1000}
    replies = {("d1", "alpha"): ["good", "fine"], ("d1", "beta"): ["poor", "bad"]}
    with FakeOpenAIServer(always_a) as server:
        ctx, units = arena_context(
            tmp_path, replies, arena={"mode": "audio"}, audio_judge=judge_spec(server.url)
        )
        for unit in units:
            folder = ctx.store.folder.unit_dir(unit)
            users = [
                tone(tmp_path / f"{unit.system}_u{n}.wav", hz[(unit.system, n)]) for n in (1, 2)
            ]
            tone(folder / "reply_1.wav", reply_hz[unit.system])
            # turn 2 has no reply audio: the cue "no spoken response" takes its place
            write_dialogue(folder, unit, replies[(unit.item_id, unit.system)],
                           user_audio=users, reply_audio=["reply_1.wav", None])  # fmt: skip
        (comparison,) = arena_comparisons(ctx, units)
        result = compare_arena(comparison, ctx)
        requests = server.posts("/chat/completions")
    assert result.is_done
    # the audio judge always says A: the orders disagree, a tie by default
    assert result.result["winner"] == "tie" and result.result["agreed"] is False
    parts = requests[0].body["messages"][1]["content"]
    assert [p["type"] for p in parts] == ["text", "input_audio"]

    a, b = result.result["a"], result.result["b"]
    target = arena_audio_folder(ctx.store.run_dir) / f"{safe_name(comparison.key)}.order1.wav"
    audio = read_audio(target)
    samples, rate = audio.samples, audio.rate
    layout = json.loads(target.with_suffix(".json").read_text())["segments"]
    names = [s["segment"] for s in layout]
    expected = []
    for label in LABELS:
        expected.append(f"cue: dialogue with model {label}")
        for n in (1, 2):
            expected += [f"cue: turn {n}", f"{label} turn {n} user"]
            expected += [f"cue: {label} turn {n} response", f"{label} turn {n} reply"]
    assert names == expected

    # every gap between segments is one second of silence, measured in the file
    gaps = zero_runs(samples, rate, 0.95)
    assert len(gaps) == len(layout) - 1
    assert all(length == pytest.approx(1.0, abs=0.05) for _, length in gaps)
    for before, after in pairwise(layout):
        gap = samples[round(before["end_s"] * rate) : round(after["start_s"] * rate)]
        assert gap.size == rate and not gap.any()

    # the stored audio sits where the layout says, in order (A's turns, then B's)
    def heard(name: str) -> float:
        seg = next(s for s in layout if s["segment"] == name)
        return peak_hz(samples[round(seg["start_s"] * rate) : round(seg["end_s"] * rate)], rate)

    for label, system in (("A", a), ("B", b)):
        for n in (1, 2):
            assert heard(f"{label} turn {n} user") == pytest.approx(hz[(system, n)], abs=5)
        assert heard(f"{label} turn 1 reply") == pytest.approx(reply_hz[system], abs=5)
        cue = next(s for s in layout if s["segment"] == f"{label} turn 2 reply")
        spoken = samples[round(cue["start_s"] * rate) : round(cue["end_s"] * rate)]
        assert np.sqrt(np.mean(spoken**2)) > 0.01  # the cue is speech, not silence

    # order 2 swaps the dialogues; both files are cached and reused
    second = read_audio(target.with_name(target.name.replace("order1", "order2")))
    assert second.duration == pytest.approx(audio.duration, abs=0.01)
    stamp = target.stat().st_mtime_ns
    with FakeOpenAIServer(always_a) as server:
        ctx.config.audio_judge = ctx.config.audio_judge.model_copy(update={"base_url": server.url})
        ctx._models.clear()
        assert compare_arena(comparison, ctx).is_done
    assert target.stat().st_mtime_ns == stamp


def test_audio_mode_without_an_audio_judge_is_not_run(tmp_path: Path) -> None:
    replies = {("d1", "alpha"): ["good"], ("d1", "beta"): ["poor"]}
    ctx, units = arena_context(tmp_path, replies, arena={"mode": "audio"})
    (comparison,) = arena_comparisons(ctx, units)
    result = compare_arena(comparison, ctx)
    assert result.status == "not_run" and "audio judge" in (result.error or "")


def test_adaptive_pairing_follows_the_stored_ratings(
    tmp_path: Path, judge_server: FakeOpenAIServer
) -> None:
    quality = {"w": "good", "x": "good", "y": "poor", "z": "poor"}
    replies = {(f"d{n}", s): [q] for n in range(8) for s, q in quality.items()}
    ctx, units = arena_context(
        tmp_path, replies, judge_url=judge_server.url, arena={"pairing": "adaptive", "batch": 10}
    )
    first_round = [u for u in units if u.item_id != "d7"]
    planned = arena_comparisons(ctx, first_round)
    run_all(ctx, planned)
    ratings = online_elo([b for r in ctx.store.comparisons.records(ARENA) for b in battles_of(r)])
    ratings = {s: ratings.get(s, 1000.0) for s in quality}
    replanned = arena_comparisons(ctx, units)
    # the dialogues compared before keep their pair and order
    assert [(c.key, c.unit_keys) for c in replanned[:7]] == [(c.key, c.unit_keys) for c in planned]
    (new,) = [c for c in replanned if c.units[0].item_id == "d7"]
    candidates = {frozenset(pair) for pair in closest_pairs(ratings)}
    assert frozenset(u.system for u in new.units) in candidates


def test_elo_is_replayed_in_judging_order_not_dialogue_order(
    tmp_path: Path, judge_server: FakeOpenAIServer
) -> None:
    """Regression: the summary replayed the verdicts sorted by key (dialogue id)."""
    replies = {
        ("d1", "alpha"): ["good"],
        ("d1", "beta"): ["poor"],
        ("d2", "alpha"): ["poor"],
        ("d2", "beta"): ["good"],
        ("d3", "alpha"): ["good"],
        ("d3", "beta"): ["poor"],
    }
    ctx, units = arena_context(
        tmp_path, replies, judge_url=judge_server.url, arena={"resamples": 50}
    )
    by_dialogue = {c.units[0].item_id: c for c in arena_comparisons(ctx, units)}
    run_all(ctx, [by_dialogue["d3"], by_dialogue["d1"], by_dialogue["d2"]])  # judging order
    ambient = summarize_arena(ctx)["dimensions"]["ambient"]
    alpha = beta = 1000.0
    for score in (1.0, 1.0, 0.0):  # d3, d1 won by alpha, then d2 lost
        expected = 1 / (1 + 10 ** ((beta - alpha) / 400))
        alpha, beta = alpha + 4 * (score - expected), beta - 4 * (score - expected)
    assert ambient["elo"]["alpha"] == pytest.approx(alpha, abs=1e-9)
    assert ambient["elo_intervals"]["systems"]["alpha"]["rating"] == pytest.approx(alpha)
    assert ambient["elo_intervals"]["order"] == "judging"
    # dialogue order (d1, d2, d3) would give another number
    in_key_order = 1000.0
    other = 1000.0
    for score in (1.0, 0.0, 1.0):
        expected = 1 / (1 + 10 ** ((other - in_key_order) / 400))
        in_key_order, other = in_key_order + 4 * (score - expected), other - 4 * (score - expected)
    assert abs(ambient["elo"]["alpha"] - in_key_order) > 1e-3
