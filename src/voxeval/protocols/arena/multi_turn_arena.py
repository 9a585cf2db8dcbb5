"""The ``arena`` comparison step of multi-turn runs: a judge compares two systems' whole
dialogues (same dialogue, dimension and trial) and says which is better - ``A``, ``B`` or
``tie`` with a reason, as JSON. Both presentation orders are judged; when they disagree the
comparison counts as a tie (``disagreement: tie``, the default) or is left out of the ratings
(``drop``), and the disagreement is recorded and counted either way.

Options (``scoring: {arena: {...}}`` of the run config):

- ``protocol``: ``both_orders`` (voxeval's, the default: both presentation orders, ties
  allowed) or ``reference`` (the MTalk-Bench reference's: one seeded order per comparison,
  verdicts limited to A or B, others skipped and counted, the dataset's own prompt when the
  suite carries it; ``voxeval.protocols.arena.reference``). With ``reference`` the input
  mode defaults to ``audio`` and the pairing to ``adaptive``, as the reference runs;
- ``pairing``: ``all`` (every pair of systems on every dialogue) or ``adaptive`` (one pair
  per dialogue, drawn among the 3 pairs with the closest current Elo ratings, as MTalk-Bench
  does, after pairs that link systems not yet compared; planned ``batch`` dialogues at a
  time from the verdicts stored so far, the runner judging each batch before the next is
  planned; a dialogue compared once keeps its pair so the plan stays stable);
- ``mode``: ``transcript`` (annotated transcripts to the text judge) or ``audio`` (one
  spoken comparison file per order to the audio judge);
- ``disagreement``: ``tie`` or ``drop``;
- ``judge_attempts``, ``cue_tts`` (the voice of the spoken cues), ``anchor`` and
  ``resamples`` (Bradley-Terry anchor system and bootstrap rounds), ``elo_point`` (``final``:
  the online Elo in judging order; ``median``: FastChat's median of the bootstrap).

The summary gives, per dimension, Elo (replayed in judging order: the order the verdicts were
stored) and Bradley-Terry, both with intervals and rank intervals, the
style-controlled ratings (reply words and seconds) and the win matrix
(``voxeval.analysis.ratings.arena_summary``), plus counts of order disagreements, judge requests and
parse failures, and the parse failures per system (those of the comparisons it took part in).
The judge's provider never retries bad JSON by itself under a judge, so ``judge_attempts`` is
the number of requests per verdict and every malformed answer is counted."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from voxeval.analysis.ratings.arena_pairing import AdaptivePairing
from voxeval.analysis.ratings.arena_summary import arena_summary
from voxeval.analysis.ratings.battles import Battle, Winner
from voxeval.analysis.ratings.elo import online_elo
from voxeval.analysis.ratings.rating_bootstrap import DEFAULT_RATING_RESAMPLES
from voxeval.api.context import RunContext
from voxeval.config import RunConfig, format_validation_error
from voxeval.errors import ConfigError, EndpointError, HarnessFault
from voxeval.json_types import JSONObject, JSONValue
from voxeval.protocols.arena.inputs import (
    DialogueFileError,
    StoredDialogue,
    load_dialogue,
    render_comparison,
    transcript,
)
from voxeval.protocols.arena.reference import (
    dataset_arena_prompt,
    judged_now,
    reference_label,
    reference_template,
)
from voxeval.protocols.comparison import Comparison
from voxeval.protocols.contract import WorkUnit
from voxeval.scoring.call_judges.judged_call import RatedTemplate, share_template
from voxeval.scoring.comparison_result import ComparisonResult
from voxeval.scoring.judge import Judge, JudgeResult
from voxeval.store import layout
from voxeval.store.comparisons import ComparisonRecord

ARENA = "arena"
ARENA_AUDIO_DIR = "arena_audio"
LABELS = ("A", "B")
# the judge's label -> A's score (1 win, 0.5 tie, 0 loss)
LABEL_SCORE = {"A": 1.0, "B": 0.0, "tie": 0.5}


class ArenaOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    protocol: Literal["both_orders", "reference"] = "both_orders"
    pairing: Literal["all", "adaptive"] = "all"
    batch: int = Field(default=4, ge=1, le=10_000)  # adaptive: dialogues planned per round
    mode: Literal["transcript", "audio"] = "transcript"
    disagreement: Literal["tie", "drop"] = "tie"
    judge_attempts: int = Field(default=3, ge=1, le=10)
    cue_tts: str = Field(default="piper", min_length=1)
    anchor: str | None = None
    resamples: int = Field(default=DEFAULT_RATING_RESAMPLES, ge=0, le=100_000)
    # the Elo point: the online Elo in judging order, or FastChat's median of the bootstrap
    elo_point: Literal["final", "median"] = "final"

    @model_validator(mode="before")
    @classmethod
    def _reference_defaults(cls, data: JSONValue) -> JSONValue:
        """The reference protocol hears audio and pairs adaptively unless told otherwise."""
        if isinstance(data, dict) and data.get("protocol") == "reference":
            data = {"mode": "audio", "pairing": "adaptive", **data}
        return data


def arena_options(config: RunConfig) -> ArenaOptions:
    """The validated ``scoring.arena`` section; ``ConfigError`` naming the field."""
    raw = config.scoring.get(ARENA, {})
    if raw is None:
        raw = {}
    try:
        return ArenaOptions.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(format_validation_error("config scoring.arena", exc)) from exc


def check_arena(config: RunConfig, steps: Sequence[str]) -> list[str]:
    """Problems with running the arena for ``config`` (empty when fine or not asked for)."""
    if ARENA not in steps:
        return []
    problems = []
    if len(config.systems) < 2:
        problems.append(f"{ARENA} compares systems and needs two or more; the config has one")
    try:
        options = arena_options(config)
    except ConfigError as exc:
        return [*problems, str(exc)]
    names = {spec.name for spec in config.systems}
    if options.anchor is not None and options.anchor not in names:
        problems.append(
            f"config scoring.arena.anchor: {options.anchor!r} is not a system of the run"
        )
    return problems


# -- planning ---------------------------------------------------------------------------------


def _cell_key(unit: WorkUnit) -> tuple[str, str, int]:
    return (unit.item_id, unit.category, unit.trial)


def _key(cell: tuple[str, str, int], first: str, second: str) -> str:
    item, dimension, trial = cell
    return f"{item}|{dimension}|{trial}|{first}|{second}"


def judging_order(records: Sequence[ComparisonRecord]) -> list[ComparisonRecord]:
    """The records in the order their outcomes were stored (the judging order; equal or
    unknown times fall back to the key)."""

    # judged_at_ns (the verdict's own time, in nanoseconds) orders verdicts stored within the
    # same second; records without it fall back to when they were stored, then to the key
    def _when(r: ComparisonRecord) -> tuple[bool, int, bool, float, str]:
        judged = (r.result or {}).get("judged_at_ns")
        stored = r.compared_at.timestamp() if r.compared_at is not None else 0.0
        return (judged is None, int(judged or 0), r.compared_at is None, stored, r.key)

    return sorted(records, key=_when)


def _stored_battles(ctx: RunContext) -> list[Battle]:
    """The stored verdicts as battles, ``order`` = their place in the judging order."""
    records = judging_order(ctx.store.comparisons.records(ARENA))
    battles = [b for r in records for b in battles_of(r)]
    return [replace(b, order=i) for i, b in enumerate(battles)]


def arena_comparisons(ctx: RunContext, units: Sequence[WorkUnit]) -> list[Comparison]:
    """The arena comparisons over the planned ``units``, in plan order. Key:
    ``dialogue|dimension|trial|X|Y`` with X before Y in the config's order; which of the two
    is shown as A comes from ``ctx.rng`` seeded with the key (``all``) or from the seeded
    adaptive draw (``adaptive``)."""
    options = arena_options(ctx.config)
    order = {spec.name: i for i, spec in enumerate(ctx.config.systems)}
    cells: dict[tuple[str, str, int], dict[str, WorkUnit]] = defaultdict(dict)
    for unit in units:
        if unit.system in order:
            cells[_cell_key(unit)][unit.system] = unit
    if options.pairing == "adaptive":
        return _adaptive(ctx, cells, order)
    out = []
    for cell, by_system in cells.items():
        systems = sorted(by_system, key=order.__getitem__)
        for i, x in enumerate(systems):
            for y in systems[i + 1 :]:
                key = _key(cell, x, y)
                a, b = (y, x) if ctx.rng(ARENA, key).random() < 0.5 else (x, y)
                out.append(Comparison(ARENA, key, (by_system[a], by_system[b])))
    return out


def _planned_pair(key: str) -> tuple[str, str] | None:
    """The pair ``(X, Y)`` a stored key ``dialogue|dimension|trial|X|Y`` names."""
    parts = key.split("|")
    return (parts[3], parts[4]) if len(parts) == 5 else None


def _adaptive(
    ctx: RunContext,
    cells: dict[tuple[str, str, int], dict[str, WorkUnit]],
    order: dict[str, int],
) -> list[Comparison]:
    """The comparisons stored so far (same pair and order) plus the next ``batch`` dialogues
    without one, each paired from the Elo ratings of the stored verdicts and the pairs
    compared or planned so far in its dimension (coverage first, see ``arena_pairing``)."""
    options = arena_options(ctx.config)
    records = ctx.store.comparisons.records(ARENA)
    stored = {r.key: r for r in records}
    by_dimension: dict[str, list[Battle]] = defaultdict(list)
    for battle in _stored_battles(ctx):
        by_dimension[battle.dimension].append(battle)
    links: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for record in records:
        pair = _planned_pair(record.key)
        if pair is not None:
            links[record.key.split("|")[1]].append(pair)
    out = []
    planned = 0
    for cell, by_system in cells.items():
        if len(by_system) < 2:
            continue
        keys = {u.key: u for u in by_system.values()}
        kept = [
            r
            for k, r in stored.items()
            if k.startswith(f"{cell[0]}|{cell[1]}|{cell[2]}|")
            and all(u in keys for u in r.unit_keys)
        ]
        if kept:  # compared before: the same pair and order, so keys stay stable
            record = sorted(kept, key=lambda r: r.key)[0]
            units = tuple(keys[u] for u in record.unit_keys)
            out.append(Comparison(ARENA, record.key, units))
            continue
        if planned >= options.batch:
            continue  # planned in a later round, from the verdicts of this one
        ratings = online_elo(by_dimension[cell[1]], systems=by_system)
        ratings = {name: ratings[name] for name in by_system}
        seed = int(ctx.rng(ARENA, "adaptive", *cell).integers(2**31))
        a, b = AdaptivePairing(seed).propose(ratings, links[cell[1]])
        links[cell[1]].append((a, b))
        planned += 1
        x, y = sorted((a, b), key=order.__getitem__)
        out.append(Comparison(ARENA, _key(cell, x, y), (by_system[a], by_system[b])))
    return out


# -- judging ----------------------------------------------------------------------------------

ARENA_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "winner": {"type": "string", "enum": ["A", "B", "tie"]},
        "reason": {"type": "string", "minLength": 1},
    },
    "required": ["winner", "reason"],
    "additionalProperties": False,
}

_SYSTEM = (
    "You compare two spoken dialogue systems. Each had the same multi-turn conversation with "
    "a user; you see (or hear) both conversations in full. Judge the {dimension} dimension: "
    "{focus} Judge the whole dialogue, not single turns; ignore which model came first and "
    "how long the replies are unless length helps or hurts the user. Answer only with JSON: "
    '{{"winner": "A" | "B" | "tie", "reason": "one or two sentences"}}.'
)
_FOCUS = {
    "semantic": "understanding what the user means, keeping track of the conversation, "
    "correct and helpful content.",
    "paralinguistic": "noticing how the user speaks (tone, emotion, pace, hesitation, "
    "volume - shown as tags such as <anxious tone> or [sighs]) and responding to it "
    "appropriately.",
    "ambient": "noticing sounds around the user (shown as tags such as [phone ringing]) "
    "and reacting to them sensibly while still helping.",
}
_DEFAULT_FOCUS = "which system serves the user better overall."
_TRANSCRIPT_USER = (
    "Annotated transcripts (tags in brackets describe sounds and how the user spoke).\n\n"
    "{first}\n\n{second}\n\nWhich model handled the dialogue better?"
)
_AUDIO_USER = (
    "The audio holds both conversations: a spoken cue announces each model's dialogue, each "
    "turn and each model response. Which model handled the dialogue better?"
)


def arena_template(mode: str) -> RatedTemplate:
    return share_template(
        f"arena_{mode}",
        _SYSTEM,
        _TRANSCRIPT_USER if mode == "transcript" else _AUDIO_USER,
        ARENA_SCHEMA,
        lambda answer: LABEL_SCORE[str(answer["winner"])],
    )


def _judge(ctx: RunContext, options: ArenaOptions) -> tuple[Judge | None, str | None]:
    if options.mode == "audio":
        heard = ctx.audio_judge()
        if heard is None:
            return None, ctx.audio_judge_unavailable_reason() or "no audio judge"
        return Judge(heard, modality="audio", max_attempts=options.judge_attempts), None
    llm = ctx.judge()
    if llm is None:
        return None, ctx.judge_unavailable_reason() or "no judge"
    return Judge(llm, max_attempts=options.judge_attempts), None


def _winner_system(label: str, shown: tuple[str, str]) -> str:
    return "tie" if label == "tie" else shown[LABELS.index(label)]


def _grade_order(
    ctx: RunContext,
    judge: Judge,
    options: ArenaOptions,
    comparison: Comparison,
    shown: tuple[StoredDialogue, StoredDialogue],
    order_index: int,
    dataset_prompt: str | None = None,
) -> JudgeResult:
    dimension = shown[0].dimension or comparison.units[0].category
    variables = {
        "dimension": dimension or "overall",
        "focus": _FOCUS.get(dimension, _DEFAULT_FOCUS),
        "first": transcript(shown[0], "A"),
        "second": transcript(shown[1], "B"),
    }
    seed = int(ctx.rng(ARENA, comparison.key, order_index).integers(2**31))
    audio = None
    if options.mode == "audio":
        tts = ctx.provider("tts", options.cue_tts)
        target = (
            arena_audio_folder(ctx.store.run_dir)
            / f"{layout.safe_name(comparison.key)}.order{order_index + 1}.wav"
        )
        try:
            audio = render_comparison(
                target, list(zip(LABELS, shown, strict=True)), lambda text: tts.synthesize(text)
            )
        except (OSError, EndpointError) as exc:
            raise HarnessFault(
                f"arena audio rendering failed: {exc}", component="renderer"
            ) from exc
    template = (
        reference_template(arena_template(options.mode).user, dataset_prompt)
        if options.protocol == "reference"
        else arena_template(options.mode)
    )
    return judge.grade(template, variables, audio=audio, seed=seed)


def compare_arena(comparison: Comparison, ctx: RunContext) -> ComparisonResult:
    """Judge the two stored dialogues of ``comparison`` in both orders (A first, then B
    first). A missing judge is ``not_run`` with the reason; a judge that never answers in
    format, or whose endpoint stays down, leaves the comparison pending."""
    options = arena_options(ctx.config)
    unit_a, unit_b = comparison.units
    try:
        side_a = load_dialogue(ctx.store.folder.unit_dir(unit_a))
        side_b = load_dialogue(ctx.store.folder.unit_dir(unit_b))
    except DialogueFileError as exc:
        return ComparisonResult.failed(str(exc), "input")
    judge, missing = _judge(ctx, options)
    if judge is None:
        return ComparisonResult.not_run(f"{ARENA}: {missing}", "judge")
    result: dict[str, Any] = {
        "dialogue": unit_a.item_id,
        "dimension": unit_a.category,
        "trial": unit_a.trial,
        "a": unit_a.system,
        "b": unit_b.system,
        "mode": options.mode,
        "protocol": options.protocol,
        "judge": judge.identity(),
        "features": {side_a.system: side_a.features(), side_b.system: side_b.features()},
    }
    if options.protocol == "reference":
        return _compare_reference(ctx, judge, options, comparison, (side_a, side_b), result)
    orders: list[dict[str, Any]] = []
    accounting: dict[str, Any] = {}
    for index, shown in enumerate(((side_a, side_b), (side_b, side_a))):
        try:
            graded = _grade_order(ctx, judge, options, comparison, shown, index)
        except EndpointError as exc:
            return ComparisonResult.pending_retry(
                f"{ARENA} judge: {exc}", {**result, "orders": orders}
            )
        for name, value in graded.accounting().items():
            if isinstance(value, int | float):
                accounting[name] = accounting.get(name, 0) + value
        names = (shown[0].system, shown[1].system)
        if graded.value is None or not isinstance(graded.parsed, dict):
            partial = {**result, "orders": orders, "accounting": accounting}
            return ComparisonResult.pending_retry(
                f"{ARENA} judge, order {index + 1}: {graded.error or 'no answer'}", partial
            )
        label = str(graded.parsed["winner"])
        orders.append(
            {
                "shown_a": names[0],
                "shown_b": names[1],
                "label": label,
                "winner": _winner_system(label, names),
                "reason": str(graded.parsed["reason"]),
            }
        )
    agreed = orders[0]["winner"] == orders[1]["winner"]
    result.update(
        orders=orders,
        agreed=agreed,
        # the verdict that counts: the common one; a disagreement is a tie or left out
        winner=orders[0]["winner"]
        if agreed
        else ("tie" if options.disagreement == "tie" else None),
        disagreement=options.disagreement,
        accounting=accounting,
        judged_at_ns=judged_now(),
    )
    return ComparisonResult.done(result)


def _accounting(graded: JudgeResult) -> JSONObject:
    return {k: v for k, v in graded.accounting().items() if isinstance(v, int | float)}


def _compare_reference(
    ctx: RunContext,
    judge: Judge,
    options: ArenaOptions,
    comparison: Comparison,
    shown: tuple[StoredDialogue, StoredDialogue],
    result: JSONObject,
) -> ComparisonResult:
    """One verdict in the planned order; a verdict other than A or B is skipped (done,
    without a winner, ``skipped: true``), as the reference skips it."""
    prompt = dataset_arena_prompt(ctx, comparison.units[0].item_id)
    result["prompt"] = "dataset" if prompt else "voxeval"
    try:
        graded = _grade_order(ctx, judge, options, comparison, shown, 0, prompt)
    except EndpointError as exc:
        return ComparisonResult.pending_retry(f"{ARENA} judge: {exc}", result)
    accounting = _accounting(graded)
    if graded.value is None or not isinstance(graded.parsed, dict):
        return ComparisonResult.pending_retry(
            f"{ARENA} judge: {graded.error or 'no answer'}", {**result, "accounting": accounting}
        )
    names = (shown[0].system, shown[1].system)
    said = str(graded.parsed["winner"])
    label = reference_label(said)
    order: JSONObject = {
        "shown_a": names[0],
        "shown_b": names[1],
        "label": label or said,
        "winner": None if label is None else _winner_system(label, names),
        "reason": str(graded.parsed["reason"]),
    }
    result.update(
        orders=[order],
        agreed=True,
        winner=order["winner"],
        skipped=label is None,
        accounting=accounting,
        judged_at_ns=judged_now(),
    )
    return ComparisonResult.done(result)


# -- summary ----------------------------------------------------------------------------------


def battles_of(record: ComparisonRecord) -> list[Battle]:
    """The battle of a done arena comparison (none when its verdict was dropped): A is the
    system shown first in the first order; the style features are its reply words/seconds."""
    result = record.result
    if record.status != "done" or not result or result.get("winner") is None:
        return []
    a, b = str(result["a"]), str(result["b"])
    winner: Winner = "tie" if result["winner"] == "tie" else ("a" if result["winner"] == a else "b")
    features = result.get("features") or {}
    return [
        Battle(
            system_a=a,
            system_b=b,
            winner=winner,
            item_id=str(result["dialogue"]),
            dimension=str(result.get("dimension") or ""),
            features_a={k: float(v) for k, v in dict(features.get(a) or {}).items()},
            features_b={k: float(v) for k, v in dict(features.get(b) or {}).items()},
        )
    ]


def summarize_arena(ctx: RunContext) -> JSONObject:
    """Per dimension: the arena summary of its battles (online Elo replayed in judging order),
    the systems left unrated with the reason, and the counts of comparisons, order
    disagreements, dropped and skipped verdicts and parse failures; ``protocol`` names the
    mode used."""
    options = arena_options(ctx.config)
    records = judging_order(ctx.store.comparisons.records(ARENA))
    battles: dict[str, list[Battle]] = defaultdict(list)
    counts: dict[str, dict[str, int]] = defaultdict(
        lambda: {
            "done": 0,
            "pending": 0,
            "failed": 0,
            "not_run": 0,
            "order_disagreements": 0,
            "dropped": 0,
            "parse_failures": 0,
            "judge_requests": 0,
            "skipped": 0,
        }
    )
    # dimension -> system -> parse failures in the comparisons that system took part in
    by_system: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for record in records:
        result = record.result or {}
        # a comparison not judged yet has no result: its key names the dimension and systems
        parts = record.key.split("|")
        dimension = str(result.get("dimension") or (parts[-4] if len(parts) >= 5 else ""))
        entry = counts[dimension]
        entry[record.status] = entry.get(record.status, 0) + 1
        accounting = result.get("accounting") or {}
        failures = int(accounting.get("parse_failures", 0))
        entry["parse_failures"] += failures
        entry["judge_requests"] += int(accounting.get("judge_requests", 0))
        for system in parts[-2:] if len(parts) >= 5 else (result.get("a"), result.get("b")):
            if system:
                by_system[dimension][str(system)] += failures
        if record.status != "done":
            continue
        if not result.get("agreed", True):
            entry["order_disagreements"] += 1
        if result.get("skipped"):
            entry["skipped"] += 1
        elif result.get("winner") is None:
            entry["dropped"] += 1
        for battle in battles_of(record):
            battles[dimension].append(replace(battle, order=len(battles[dimension])))
    dimensions: JSONObject = {}
    entered = _systems_by_dimension(ctx)
    for dimension in sorted(counts):
        summary = arena_summary(
            battles[dimension],
            anchor=options.anchor,
            n_resamples=options.resamples,
            seed=ctx.seed,
            elo_point=options.elo_point,
        )
        summary["unrated"] = _unrated(
            entered.get(dimension, []), battles[dimension], records, dimension
        )
        dimensions[dimension] = {
            **summary,
            "comparisons": dict(counts[dimension]),
            "parse_failures_by_system": dict(sorted(by_system[dimension].items())),
        }
    total: dict[str, int] = defaultdict(int)
    for systems in by_system.values():
        for system, failures in systems.items():
            total[system] += failures
    return {
        "unit": "dialogue",
        "protocol": options.protocol,
        "elo_order": "judging",
        "parse_failures": {
            "total": sum(c["parse_failures"] for c in counts.values()),
            "by_system": dict(sorted(total.items())),
        },
        "mode": options.mode,
        "pairing": options.pairing,
        "disagreement": options.disagreement,
        "dimensions": dimensions,
    }


def _systems_by_dimension(ctx: RunContext) -> dict[str, list[str]]:
    """The systems with a unit in each dimension, in the config's order."""
    order = [spec.name for spec in ctx.config.systems]
    present: dict[str, set[str]] = defaultdict(set)
    for unit in ctx.store.units.records():
        present[unit.category].add(unit.system)
    return {dim: [name for name in order if name in names] for dim, names in present.items()}


def _unrated(
    systems: Sequence[str],
    battles: Sequence[Battle],
    records: Sequence[ComparisonRecord],
    dimension: str,
) -> dict[str, str]:
    """``{system: why it has no rating}`` for the dimension's systems without a battle."""
    rated = {name for battle in battles for name in (battle.system_a, battle.system_b)}
    statuses: dict[str, list[str]] = defaultdict(list)
    for record in records:
        parts = record.key.split("|")
        if len(parts) == 5 and parts[1] == dimension:
            for name in parts[3:]:
                statuses[name].append(record.status)
    unrated = {}
    for name in systems:
        if name in rated:
            continue
        seen = statuses.get(name, [])
        if not seen:
            unrated[name] = "never compared: no comparison was planned with it"
        elif "done" not in seen:
            counted = ", ".join(f"{seen.count(s)} {s.replace('_', ' ')}" for s in sorted(set(seen)))
            unrated[name] = f"no comparison of it is done yet ({counted})"
        else:
            unrated[name] = "every verdict about it was dropped (the two orders disagreed)"
    return unrated


def arena_audio_folder(run_dir: Path) -> Path:
    """Where the spoken comparison files of the audio mode are cached."""
    return run_dir / ARENA_AUDIO_DIR
