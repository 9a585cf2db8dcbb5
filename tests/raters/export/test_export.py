"""``voxeval raters export``: answers inserted through the schema tables (SQLite, and
PostgreSQL when a local server can be started) become files the analysis code reads, the
same ratings as running the analysis directly, and the raters' quality with exclusions."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy import create_engine
from typer.testing import CliRunner

from tests.raters.study_db import fill_study_db
from tests.raters.study_runs import multi_turn_run, tone
from voxeval.analysis.ratings.arena_summary import arena_summary
from voxeval.analysis.ratings.battles import battle_from_judgement
from voxeval.analysis.ratings.human_votes import load_votes
from voxeval.analysis.ratings.pairwise_judgement import PairwiseJudgement
from voxeval.audio import write_audio
from voxeval.benchmarks.mtalk.dialogue_suite import load_dialogue_suite
from voxeval.cli.main import app
from voxeval.raters.export.export import export_study
from voxeval.raters.export.export_analysis import human_llm_arena
from voxeval.raters.quality import AGREEMENT_OUTLIER, rater_quality
from voxeval.raters.study.study_build import StudyOptions, build_study
from voxeval.raters.study.study_files import load_study_config, load_study_items

PREFERENCE = {"gamma": 3, "beta": 2, "alpha": 1}
RESAMPLES = 200


@pytest.fixture(scope="module")
def mt_run(tmp_path_factory) -> Path:
    """The multi-turn run without a judge; the tests only build studies from it."""
    return multi_turn_run(tmp_path_factory.mktemp("export"))


@pytest.fixture(scope="module")
def arena_study(mt_run: Path) -> Path:
    build_study(mt_run, mt_run.parent / "study", StudyOptions(task="arena", gold=1, seed=3))
    return mt_run.parent / "study"


def _answer(item: Any, winner: str, swap: bool) -> dict[str, Any]:
    first, second = (item.systems["b"], item.systems["a"]) if swap else tuple(item.systems.values())
    choice = winner if winner in ("tie", "both_bad") else "a" if winner == first else "b"
    return {"choice": choice, "winner": winner, "first": first, "second": second,
            "reason": f"because {winner}"}  # fmt: skip


def arena_answers(study: Path) -> list[tuple[str, str, dict[str, Any]]]:
    """r1-r3 prefer gamma > beta > alpha (r2 once prefers alpha, r3 once calls a tie, r1 once
    says both bad); r4 always picks the other side; everyone answers the gold item, r4 wrongly."""
    items = load_study_items(study, load_study_config(study))
    answers = []
    for n, rater in enumerate(("r1", "r2", "r3", "r4")):
        for k, item in enumerate(items):
            a, b = item.systems["a"], item.systems["b"]
            if item.kind == "gold":
                right = item.systems[item.gold["choice"]]
                winner = right if rater != "r4" else (b if right == a else a)
            else:
                best, worst = sorted((a, b), key=PREFERENCE.get, reverse=True)
                winner = best if rater != "r4" else worst
                if (rater, item.item_id) == ("r2", "arena:d1:alpha~beta"):
                    winner = "alpha"
                if (rater, item.item_id) == ("r3", "arena:d2:beta~gamma"):
                    winner = "tie"
                if (rater, item.item_id) == ("r1", "arena:d2:alpha~beta"):
                    winner = "both_bad"
            answers.append((rater, item.item_id, _answer(item, winner, swap=bool((n + k) % 2))))
    return answers


def _direct_votes(study: Path, answers, keep: set[str]) -> list[PairwiseJudgement]:
    """The same votes built here, straight from the answers (not from the export's files)."""
    items = {i.item_id: i for i in load_study_items(study, load_study_config(study))}
    out = []
    for rater, item_id, answer in answers:
        item = items[item_id]
        if item.kind == "gold" or rater not in keep:
            continue
        winner = answer["winner"] if answer["winner"] in item.systems.values() else None
        out.append(
            PairwiseJudgement(rater, item.source["item"], answer["first"], answer["second"],
                              winner, dimension=item.dimension)
        )  # fmt: skip
    return out


def _bt(votes: list[PairwiseJudgement]) -> dict[str, Any]:
    from dataclasses import replace

    battles = [replace(battle_from_judgement(v, order=n), dimension="all")
               for n, v in enumerate(votes)]  # fmt: skip
    return arena_summary(battles, seed=0, n_resamples=RESAMPLES)["bt"]


def test_arena_export_files_ratings_quality_and_exclusions(arena_study: Path, tmp_path) -> None:
    db = tmp_path / "study.db"
    answers = arena_answers(arena_study)
    fill_study_db(f"sqlite:///{db}", arena_study, answers)
    out = tmp_path / "export"
    result = export_study(arena_study, db=f"sqlite:///{db}", out_dir=out, resamples=RESAMPLES)
    analysis = json.loads((out / "analysis.json").read_text())
    assert analysis == json.loads(json.dumps(result.analysis, default=str))

    # r4 is flagged by the binomial test; its 6 normal answers are left out, gold apart
    assert analysis["flagged_raters"] == ["r4"]
    assert analysis["responses"] == 28 and analysis["gold_responses"] == 4
    assert analysis["excluded_responses"] == 6
    raters = {r["rater_id"]: r for r in analysis["quality"]["raters"]}
    assert raters["r4"]["flags"] == [AGREEMENT_OUTLIER] and raters["r4"]["agreed"] == 0
    assert raters["r4"]["gold_accuracy"] == 0.0 and raters["r1"]["gold_accuracy"] == 1.0
    assert analysis["gold"] == {
        "answers": 4, "correct": 3, "accuracy": 0.75,
        "items": {next(iter(analysis["gold"]["items"])): {"answers": 4, "correct": 3}},
    }  # fmt: skip
    csv_header = (out / "raters.csv").read_text().splitlines()[0]
    assert csv_header.startswith("rater_id,responses,gold_answered")

    # votes.jsonl / votes.csv load with the analysis' own reader; both_bad is a tie
    votes = load_votes(out / "votes.jsonl")
    assert len(votes) == 18 and {v.rater for v in votes} == {"r1", "r2", "r3"}
    assert [(v.item, v.first, v.second, v.winner) for v in votes] == [
        (v.item, v.first, v.second, v.winner) for v in load_votes(out / "votes.csv")
    ]
    rows = [json.loads(line) for line in (out / "votes.jsonl").read_text().splitlines()]
    both_bad = next(r for r in rows if r["choice"] == "both_bad")
    assert both_bad["winner"] == "tie" and both_bad["item"] == "d2"
    assert all(r["first_length"] > 0 and r["second_length"] > 0 for r in rows)

    # the ratings equal the analysis run directly on the same votes
    direct = _bt(_direct_votes(arena_study, answers, {"r1", "r2", "r3"}))
    exported = analysis["arena"]["all"]["bt"]
    for system in PREFERENCE:
        for field in ("rating", "ci_low", "ci_high", "rank"):
            assert exported["systems"][system][field] == pytest.approx(
                direct["systems"][system][field]
            )
    ranked = sorted(exported["systems"], key=lambda s: -exported["systems"][s]["rating"])
    assert ranked == ["gamma", "beta", "alpha"]
    assert set(analysis["arena"]["dimensions"]) == {"semantic", "ambient"}
    assert set(analysis["arena"]["bias"]["raters"]) == {"r1", "r2", "r3"}
    assert "arena verdicts" in analysis["arena"]["human_vs_llm"]["not_run"]
    assert "## Arena (18 votes)" in (out / "analysis.md").read_text()

    # the admin page's entry point reads the same database
    engine = create_engine(f"sqlite:///{db}")
    quality = {
        q.rater_id: q for q in rater_quality(engine, load_study_config(arena_study).study_id)
    }
    engine.dispose()
    assert quality["r4"].flagged and not quality["r1"].flagged

    # --keep-flagged keeps r4's votes, and says nothing was excluded
    kept = CliRunner().invoke(app, ["raters", "export", str(arena_study), "--db",
                                    f"sqlite:///{db}", "--out", str(tmp_path / "kept"),
                                    "--keep-flagged", "--resamples", "50"])  # fmt: skip
    assert kept.exit_code == 0, kept.output
    again = json.loads((tmp_path / "kept" / "analysis.json").read_text())
    assert again["excluded_responses"] == 0 and again["arena"]["n_votes"] == 24


def test_export_reads_postgresql(arena_study: Path, postgres_url: str, tmp_path) -> None:
    answers = arena_answers(arena_study)
    fill_study_db(postgres_url, arena_study, answers)
    plain = postgres_url.replace("postgresql+psycopg://", "postgresql://")  # as users type it
    result = export_study(arena_study, db=plain, out_dir=tmp_path / "pg", resamples=RESAMPLES)
    assert result.analysis["flagged_raters"] == ["r4"]
    direct = _bt(_direct_votes(arena_study, answers, {"r1", "r2", "r3"}))
    exported = result.analysis["arena"]["all"]["bt"]["systems"]
    assert {s: v["rating"] for s, v in exported.items()} == pytest.approx(
        {s: v["rating"] for s, v in direct["systems"].items()}
    )


def test_human_vs_llm_arena_kappa_golden() -> None:
    human = [
        PairwiseJudgement("h1", "d1", "x", "y", "x"),
        PairwiseJudgement("h1", "d2", "y", "x", "y"),
        PairwiseJudgement("h2", "d3", "x", "y", None),
        PairwiseJudgement("h2", "d9", "x", "y", "x"),  # no LLM verdict on d9
    ]
    llm = [  # one verdict per judged order; sides differ from the humans'
        PairwiseJudgement("llm:j", "d1", "y", "x", "x"),
        PairwiseJudgement("llm:j", "d2", "x", "y", "x"),
        PairwiseJudgement("llm:j", "d3", "y", "x", None),
    ]
    out = human_llm_arena(human, llm, None)
    # pairs (human, llm): (x, x), (y, x), (tie, tie); po = 2/3
    # human margins x 1/3, y 1/3, tie 1/3; llm x 2/3, tie 1/3 -> pe = 2/9 + 1/9 = 1/3
    assert out["pairs"] == 3 and out["votes_matched"] == 3 and out["votes_unmatched"] == 1
    assert out["agreement"] == pytest.approx(2 / 3)
    assert out["kappa"] == pytest.approx((2 / 3 - 1 / 3) / (1 - 1 / 3))


def test_record_export_builds_the_human_voiced_suite(mt_run: Path, tmp_path: Path) -> None:
    study = tmp_path / "record"
    build_study(mt_run, study, StudyOptions(task="record", limit=1))
    items = load_study_items(study, load_study_config(study))
    answers = []
    for n, item in enumerate(items):
        path = study / "recordings" / f"s1_{n}.wav"
        write_audio(tone(0.7, 300 + 50 * n, rate=48000), path)  # the browser's rate
        answer = {"path": f"recordings/{path.name}", "duration_s": 0.7, "sample_rate": 48000}
        answers.append(("s1", item.item_id, answer))
    db = f"sqlite:///{tmp_path / 'rec.db'}"
    fill_study_db(db, study, answers[:1])
    partial = export_study(study, db=db, out_dir=tmp_path / "partial")
    assert partial.analysis["record"]["missing"] == ["record:d1:turn2"]
    assert not (tmp_path / "partial" / "human_suite").exists()

    db = f"sqlite:///{tmp_path / 'rec2.db'}"
    fill_study_db(db, study, answers)
    result = export_study(study, db=db, out_dir=tmp_path / "full")
    record = result.analysis["record"]
    assert record["recorded"] == 2 and record["sample_rate"] == 16000
    suite = load_dialogue_suite(record["suite"])
    assert [d.id for d in suite.dialogues] == ["d1"]
    turns = suite.dialogues[0].turns
    assert [t.transcript for t in turns] == ["<calm tone> d1 turn 1", "<calm tone> d1 turn 2"]
    import soundfile

    info = soundfile.info(turns[1].audio)
    assert info.samplerate == 16000 and info.duration == pytest.approx(0.7, abs=1e-3)
    lines = (tmp_path / "full" / "recordings.jsonl").read_text().splitlines()
    assert [json.loads(line)["prompt_text"] for line in lines] == ["d1 turn 1", "d1 turn 2"]
    assert np.isclose(json.loads(lines[0])["duration_s"], 0.7)


def test_human_vs_llm_judge_on_a_judged_run(tmp_path: Path) -> None:
    """A run whose loopback judge graded rubrics and ran the arena: the export compares the
    human answers with those verdicts."""
    from tests.fakes.openai_server import FakeOpenAIServer
    from tests.raters.study_runs import PreferenceJudge
    from voxeval.analysis.agreement.classification_agreement import label_kappa
    from voxeval.protocols.arena.judgements import arena_judgements
    from voxeval.store import RunStore

    with FakeOpenAIServer(PreferenceJudge()) as server:
        run = multi_turn_run(tmp_path, server.url)
    arena = tmp_path / "arena"
    build_study(run, arena, StudyOptions(task="arena", gold=1, seed=3))
    answers = arena_answers(arena)
    fill_study_db(f"sqlite:///{tmp_path / 'a.db'}", arena, answers)
    result = export_study(arena, db=f"sqlite:///{tmp_path / 'a.db'}", resamples=RESAMPLES)
    versus = result.analysis["arena"]["human_vs_llm"]
    store = RunStore(run)
    llm = arena_judgements(store)
    store.close()
    assert len(llm) == 12  # 6 comparisons x 2 judged orders
    human, machine = [], []
    for vote in _direct_votes(arena, answers, {"r1", "r2", "r3"}):
        for verdict in (j for j in llm if (j.item, j.pair) == (vote.item, vote.pair)):
            human.append(vote.winner or "tie")
            machine.append(verdict.winner or "tie")
    assert versus["pairs"] == len(human) == 36 and versus["votes_unmatched"] == 0
    assert versus["kappa"] == pytest.approx(label_kappa(human, machine)[0])
    assert 0 < versus["kappa"] < 1  # the humans' tie, both-bad and one upset disagree
    assert versus["ranking_spearman"]["rho"] == pytest.approx(1.0)  # same order of 3 systems

    rubric = tmp_path / "rubric"
    build_study(run, rubric, StudyOptions(task="rubric"))
    items = load_study_items(rubric, load_study_config(rubric))
    rubric_answers = []
    for item in items:
        system = item.systems["reply"]
        # h1 ticks as the LLM does (gamma all, beta general only); h2 ticks everything
        llm_like = {
            c.id: int(system == "gamma" or (system == "beta" and c.id.startswith("criteria_s_")))
            for c in item.criteria
        }
        rubric_answers.append(("h1", item.item_id, {"system": system, "criteria": llm_like}))
        every = {c.id: 1 for c in item.criteria}
        rubric_answers.append(("h2", item.item_id, {"system": system, "criteria": every}))
    fill_study_db(f"sqlite:///{tmp_path / 'r.db'}", rubric, rubric_answers)
    exported = export_study(rubric, db=f"sqlite:///{tmp_path / 'r.db'}")
    section = exported.analysis["rubric"]
    # 6 items x 2 criteria x 2 raters; h1 matches all 12, h2 the 6 the LLM met
    assert section["human_vs_llm"]["n"] == 24
    assert section["human_vs_llm"]["agreement"] == pytest.approx(18 / 24)
    h1 = [v for _, _, a in rubric_answers[::2] for v in a["criteria"].values()]
    h2 = [v for _, _, a in rubric_answers[1::2] for v in a["criteria"].values()]
    assert section["human_vs_llm"]["kappa"] == pytest.approx(label_kappa(h1 + h2, h1 + h1)[0])
    # gamma meets both criteria for both raters; alpha only h2's ticks (half)
    assert section["systems"]["gamma"]["case_score"]["mean"] == pytest.approx(1.0)
    assert section["systems"]["alpha"]["case_score"]["mean"] == pytest.approx(0.5)
    assert section["systems"]["beta"]["criteria"]["criteria_s_1"]["pass_rate"] == 1.0


@pytest.fixture(scope="module")
def st_run(tmp_path_factory) -> Path:
    from tests.raters.study_runs import single_turn_run

    return single_turn_run(tmp_path_factory.mktemp("single"))


@pytest.mark.models
def test_score_export_correlates_with_the_judge_checklist(st_run: Path, tmp_path: Path) -> None:
    """The judge's checklist scores are filed in the run's index as the protocol files them
    (scoring them for real needs Whisper for the language gate: tested in tests/protocols)."""
    from scipy import stats

    from voxeval.scoring.score import Score
    from voxeval.store import RunStore

    run = Path(shutil.copytree(st_run, tmp_path / "run"))  # the shared run stays unjudged
    judge = {("alpha", "q1"): 4, ("alpha", "q2"): 3, ("beta", "q1"): 8, ("beta", "q2"): 7}
    store = RunStore(run)
    for unit in store.units.records():
        query = unit.item_id.split("__")[0]
        store.scores.save(unit, {"checklist": Score(value=float(judge[(unit.system, query)]))})
    store.close()
    study = tmp_path / "score"
    build_study(run, study, StudyOptions(task="score", gold=1))
    items = load_study_items(study, load_study_config(study))
    human = {("alpha", "q1"): 5, ("alpha", "q2"): 2, ("beta", "q1"): 9, ("beta", "q2"): 6}
    answers = []
    for rater, shift in (("h1", 0), ("h2", 1)):
        for item in items:
            system = item.systems["reply"]
            score = 1 if item.kind == "gold" else human[(system, item.source["query_id"])] + shift
            answers.append((rater, item.item_id, {"system": system, "score": score}))
    db = f"sqlite:///{tmp_path / 's.db'}"
    fill_study_db(db, study, answers)
    result = export_study(study, db=db)
    section = result.analysis["score"]
    assert result.analysis["gold"]["accuracy"] == 1.0
    assert section["n_scores"] == 8  # 2 raters x 4 normal items; gold left out
    assert section["systems"]["beta"]["mean"] == pytest.approx((9 + 6 + 10 + 7) / 4)
    pairs = [(human[k] + shift, judge[k]) for shift in (0, 1) for k in human]
    overall = section["human_vs_llm"]["overall"]
    assert overall["n"] == 8 and overall["clusters"] == 2  # resampled by query
    x, y = zip(*pairs, strict=True)
    assert overall["pearson"]["r"] == pytest.approx(stats.pearsonr(x, y).statistic)
    assert overall["spearman"]["r"] == pytest.approx(stats.spearmanr(x, y).statistic)
    rows = (study / "export" / "scores.csv").read_text().splitlines()
    assert rows[0] == "rater,item_id,system,score,reason" and len(rows) == 9


def test_export_mistakes_are_named(arena_study: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    missing = runner.invoke(app, ["raters", "export", str(arena_study), "--out", str(tmp_path)])
    assert missing.exit_code == 2
    assert "study.db: no study database" in " ".join(missing.output.split())
    db = f"sqlite:///{tmp_path / 'x.db'}"
    fill_study_db(db, arena_study, [("r1", "arena:d9:alpha~beta", {"winner": "alpha"})])
    unknown = runner.invoke(app, ["raters", "export", str(arena_study), "--db", db])
    assert unknown.exit_code == 2
    assert "unknown items" in " ".join(unknown.output.split())


@pytest.mark.models
def test_single_turn_record_export_writes_a_query_suite(st_run: Path, tmp_path: Path) -> None:
    from voxeval.benchmarks.wildspeech.query_suite import load_query_suite

    study = tmp_path / "record"
    build_study(st_run, study, StudyOptions(task="record"))
    items = load_study_items(study, load_study_config(study))
    answers = []
    for n, item in enumerate(items):
        path = study / "recordings" / f"{n}.wav"
        write_audio(tone(0.6, 250 + 40 * n, rate=48000), path)
        answer = {"path": f"recordings/{path.name}", "duration_s": 0.6, "sample_rate": 48000}
        answers.append(("speaker", item.item_id, answer))
    db = f"sqlite:///{tmp_path / 'rec.db'}"
    fill_study_db(db, study, answers)
    record = export_study(study, db=db).analysis["record"]
    assert record["sample_rate"] == 22050  # the suite's recordings
    queries = load_query_suite(record["suite"])
    assert [(q.id, q.text, q.checklist[0]) for q in queries] == [
        ("q1", "How long do I boil an egg?", "Answers q1"),
        ("q2", "What's the weather like?", "Answers q2"),
    ]
    import soundfile

    assert soundfile.info(queries[0].audio).samplerate == 22050
    assert queries[1].metadata["speaker"] == "speaker"


def test_analysis_md_says_a_sweep_is_unbounded() -> None:
    from tests.analysis.arena_battles import battle
    from voxeval.analysis.ratings.arena_summary import arena_summary
    from voxeval.raters.export.export_summary import _arena

    votes = [battle("alpha", "beta", "a", f"d{i}") for i in range(4)]
    section = {"n_votes": 4, "all": arena_summary(votes, n_resamples=50), "human_vs_llm": {}}
    section["human_vs_llm"] = {"not_run": "no run"}
    text = "\n".join(_arena(section))
    assert "| alpha |" in text and "unbounded (won every battle)" in text
    assert "unbounded (lost every battle)" in text


def _response_times(out: Path) -> list[str]:
    lines = (out / "responses.jsonl").read_text().splitlines()
    return [json.loads(line)["submitted_at"] for line in lines]


def test_submitted_at_is_the_same_utc_time_on_sqlite_and_postgresql(
    arena_study: Path, postgres_url: str, tmp_path: Path
) -> None:
    answers = arena_answers(arena_study)[:2]
    sqlite_url = f"sqlite:///{tmp_path / 'study.db'}"
    fill_study_db(sqlite_url, arena_study, answers)
    fill_study_db(postgres_url, arena_study, answers)
    # a server whose session time zone is not UTC hands back +05:30 times
    kolkata = postgres_url + "?options=-c%20TimeZone%3DAsia/Kolkata"
    export_study(arena_study, db=sqlite_url, out_dir=tmp_path / "lite", resamples=20)
    export_study(arena_study, db=kolkata, out_dir=tmp_path / "pg", resamples=20)
    expected = ["2026-01-01T00:00:00+00:00", "2026-01-01T00:00:10+00:00"]
    assert _response_times(tmp_path / "lite") == expected
    assert _response_times(tmp_path / "pg") == expected


def test_export_counts_only_the_raters_who_answered(arena_study: Path, tmp_path: Path) -> None:
    import hashlib
    from datetime import UTC, datetime

    from sqlalchemy import insert

    from voxeval.raters.schema import accounts_table

    db = f"sqlite:///{tmp_path / 'study.db'}"
    fill_study_db(db, arena_study, arena_answers(arena_study))  # r1-r4 answer
    engine = create_engine(db)
    with engine.begin() as conn:  # two more invited, who never answer
        for rater in ("r5", "r6"):
            conn.execute(
                insert(accounts_table).values(
                    study_id=load_study_config(arena_study).study_id,
                    rater_id=rater,
                    role="rater",
                    token_sha256=hashlib.sha256(rater.encode()).hexdigest(),
                    created_at=datetime(2026, 1, 1, tzinfo=UTC),
                    disabled=False,
                )
            )
    engine.dispose()
    result = export_study(arena_study, db=db, out_dir=tmp_path / "out", resamples=20)
    assert result.analysis["raters"] == 4 and result.analysis["invited_raters"] == 6
    summary = (tmp_path / "out" / "analysis.md").read_text()
    assert "- raters who answered: 4 (of 6 invited); flagged: r4" in summary
    # the source run has no LLM judge: the comparison says so
    versus = result.analysis["arena"]["human_vs_llm"]["not_run"]
    assert versus.startswith("the run had no judge")
    assert "Human vs LLM judge: not run (the run had no judge" in summary


@pytest.mark.models
def test_score_export_of_a_run_without_judge_says_so(st_run: Path, tmp_path: Path) -> None:
    study = tmp_path / "score"
    build_study(st_run, study, StudyOptions(task="score"))
    items = load_study_items(study, load_study_config(study))
    answers = [("h1", i.item_id, {"system": i.systems["reply"], "score": 5}) for i in items]
    db = f"sqlite:///{tmp_path / 's.db'}"
    fill_study_db(db, study, answers)
    result = export_study(study, db=db)
    versus = result.analysis["score"]["human_vs_llm"]
    assert versus == {"not_run": "the run had no judge: it holds no checklist scores"}
    summary = (study / "export" / "analysis.md").read_text()
    assert "Human vs judge checklist scores: not run (the run had no judge" in summary
