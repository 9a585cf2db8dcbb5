"""The report as a list of plain blocks (headings, paragraphs, tables, lists), built once from
``summary.json`` and rendered to Markdown or HTML by small serialisers."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TypeGuard

from voxeval.json_types import JSONReadObject, JSONReadValue
from voxeval.report.adapter_timing_blocks import adapter_marked, adapter_timing_blocks
from voxeval.report.arena_blocks import arena_blocks
from voxeval.report.arena_protocol_blocks import arena_protocol_blocks
from voxeval.report.blocks import (
    Block,
    BulletList,
    Heading,
    Paragraph,
    TableBlock,
    fmt_ci,
    fmt_mean_ci,
    fmt_num,
)
from voxeval.report.composite_blocks import composite_blocks
from voxeval.report.cost_blocks import cost_blocks
from voxeval.report.json_fields import (
    as_float,
    as_int,
    entries,
    objects,
    section,
    sections,
    whole_total,
)
from voxeval.report.latency_basis_blocks import latency_basis_blocks
from voxeval.report.rubric_blocks import rubric_blocks
from voxeval.report.transcript_blocks import transcript_only_blocks
from voxeval.report.validation_blocks import validation_blocks

STANDARD_KEYS = (
    "overall",
    "by_category",
    "by_condition",
    "not_run",
    "partial",
    "units",
    "usage",
    "pass_rates",
    "statistics",
    "latency",
    "judge",
    "transcripts",
    "perturbation_effects",
    "variance_components",
    "ci_width_by_trials",
    "composites",
    "simulation_validation",
    "latency_basis",
    "adapter_timing",
    "rubric",
    "transcript_only",
    "distributions",  # histograms and per-turn series drawn as figures (report.figures)
)
# Groupings shown as their own "By ..." tables, in this order.
GROUPINGS = (
    "by_category",
    "by_condition",
    "by_gender",
    "by_age",
    "by_timbre",
    "by_engine",
    "by_noise_category",
)
# What one independent unit holds, for the header (protocols name their unit).
UNIT_MEMBERS = {
    "query": "voices, conditions and trials",
    "scenario": "trials and conditions",
    "dialogue": "trials",
}
STAT_HEADER = ["mean", "95% CI", "n"]


def is_stat(value: JSONReadValue) -> TypeGuard[JSONReadObject]:
    return isinstance(value, Mapping) and "mean" in value and "n" in value


def _plural(noun: str) -> str:
    return noun[:-1] + "ies" if noun.endswith("y") and noun[-2:-1] not in "aeiou" else noun + "s"


def fmt_n(stat: JSONReadObject, unit: str = "clusters") -> str:
    """``n``, plus the number of independent units when they hold several scored units."""
    n, clusters = stat.get("n", 0), stat.get("clusters")
    if isinstance(clusters, int) and clusters and clusters != n:
        return f"{n} ({clusters} {unit})"
    return str(n)


def stat_cells(stat: JSONReadObject, unit: str = "clusters") -> list[str]:
    """mean, CI and n cells; ``unit`` names the independent units in plural."""
    return [fmt_num(stat.get("mean")), fmt_ci(stat), fmt_n(stat, unit)]


def metric_label(metric: str, stat: JSONReadObject) -> str:
    """The metric's name, with the corpus WER and median when the stat carries them (see
    ``report.corpus_wer``)."""
    if "wer_corpus" not in stat:
        return metric
    extra = f"corpus {fmt_num(stat['wer_corpus'])}, median {fmt_num(stat.get('median'))}"
    if stat.get("wer_corpus_missing"):
        extra += f"; {stat['wer_corpus_missing']} without counts"
    return f"{metric} ({extra})"


def walk_stats(prefix: str, value: JSONReadValue) -> Iterator[tuple[str, JSONReadObject]]:
    """Every stat nested in a protocol's extra field, labelled by its path (``k=`` for curves)."""
    if is_stat(value):
        yield prefix, value
    elif isinstance(value, Mapping):
        for key, inner in value.items():
            yield from walk_stats(f"{prefix}.{key}" if prefix else str(key), inner)
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            label = f"k={inner['k']}" if isinstance(inner, Mapping) and "k" in inner else str(i)
            yield from walk_stats(f"{prefix} {label}", inner)


def usage_table(buckets: JSONReadObject, label: str) -> TableBlock:
    rows = [
        [
            name,
            str(u.get("calls", 0)),
            str(u.get("requests", 0)),
            str(u.get("retries", 0)),
            str(u.get("timeouts", 0)),
            str(u.get("prompt_tokens", 0)),
            str(u.get("completion_tokens", 0)),
            str(u.get("parse_failures", 0)),
            fmt_num(u.get("parse_failure_rate")),
            "–" if u.get("cost_usd") is None else f"${u['cost_usd']:.4f}",
        ]
        for name, u in sections(buckets)
    ]
    header = [label, "calls", "requests", "retries", "timeouts"]
    header += ["prompt tok", "completion tok", "parse fail", "rate", "cost"]
    return TableBlock(header, rows)


def cluster_noun(entry: JSONReadObject) -> str:
    """The plural name of a system entry's independent unit (``queries``, ``scenarios``)."""
    note = entry.get("statistics")
    return _plural(str(note.get("unit", "item"))) if isinstance(note, Mapping) else "clusters"


def system_blocks(name: str, entry: JSONReadObject) -> list[Block]:
    label = entry.get("label")  # e.g. "tiny baseline" for the embedded cascade
    title = f"System {name} ({label})" if isinstance(label, str) and label else f"System {name}"
    blocks: list[Block] = [Heading(2, title)]
    unit = cluster_noun(entry)
    units = entry.get("units")
    if isinstance(units, Mapping):
        counts = [f"{k} {v}" for k, v in units.items() if not isinstance(v, Mapping)]
        blocks.append(Paragraph("Units: " + ", ".join(counts)))
    overall = section(entry.get("overall"))
    timing = entry.get("adapter_timing")
    if overall:
        rows = [
            [adapter_marked(m, metric_label(m, s), timing), *stat_cells(s, unit)]
            for m, s in overall.items()
            if is_stat(s)
        ]
        blocks += [Heading(3, "Overall"), TableBlock(["metric", *STAT_HEADER], rows)]
        blocks += adapter_timing_blocks(timing)
    # Protocol-specific groupings (e.g. by_pf_subcategory) are listed under "Protocol
    # results" with their full path as label, like every other extra field.
    grouped = [k for k in GROUPINGS if k in entry]
    for key in grouped:
        rows = [
            [group, metric_label(metric, s), *stat_cells(s, unit)]
            for group, stats in section(entry.get(key)).items()
            for metric, s in section(stats).items()
            if is_stat(s)
        ]
        if rows:
            label = key.removeprefix("by_")
            header = [label, "metric", *STAT_HEADER]
            blocks += [Heading(3, "By " + label.replace("_", " ")), TableBlock(header, rows)]
    extra = [
        [label, *stat_cells(stat, unit)]
        for key, value in entry.items()
        if key not in STANDARD_KEYS and key not in grouped
        for label, stat in walk_stats(key, value)
    ]
    pass_rates = section(entry.get("pass_rates"))
    rows = [[m, *stat_cells(s, unit)] for m, s in pass_rates.items() if is_stat(s)]
    if rows:
        header = ["metric", "passed share", "95% CI", "n"]
        blocks += [Heading(3, "Pass rates (threshold verdicts)"), TableBlock(header, rows)]
    if extra:
        blocks += [Heading(3, "Protocol results"), TableBlock(["result", *STAT_HEADER], extra)]
    blocks += composite_blocks(entry.get("composites"))
    blocks += rubric_blocks(entry.get("rubric"))
    blocks += transcript_only_blocks(entry)
    blocks += validation_blocks(entry.get("simulation_validation"))
    blocks += latency_basis_blocks(entry.get("latency_basis"))
    blocks += latency_blocks(entry.get("latency"))
    blocks += reliability_blocks(entry.get("judge"), entry.get("transcripts"))
    blocks += perturbation_blocks(entry.get("perturbation_effects"))
    blocks += variance_blocks(entry.get("variance_components"))
    blocks += trial_count_blocks(entry.get("ci_width_by_trials"))
    if entry.get("not_run"):
        items = [f"{m}: {reason}" for m, reason in section(entry["not_run"]).items()]
        blocks += [Heading(3, "Not run"), BulletList(items)]
    if entry.get("partial"):
        items = [
            f"{m}: {p['not_run']} scores missing ({p['reason']})"
            for m, p in sections(entry["partial"])
        ]
        blocks += [Heading(3, "Partially run"), BulletList(items)]
    usage = entry.get("usage")
    if isinstance(usage, Mapping) and usage.get("calls"):
        blocks += [Heading(3, "Usage"), usage_table({name: usage}, "system")]
    return blocks


def latency_blocks(latency: JSONReadValue) -> list[Block]:
    """p50/p90 of the stored reply timings (answered replies only)."""
    if not isinstance(latency, Mapping) or not latency:
        return []
    rows = [
        [name, fmt_num(q.get("p50")), fmt_num(q.get("p90")), str(q.get("n", 0))]
        for name, q in latency.items()
        if isinstance(q, Mapping)
    ]
    return [
        Heading(3, "Latency (seconds, answered replies)"),
        TableBlock(["timing", "p50", "p90", "n"], rows),
    ]


def reliability_blocks(judge: JSONReadValue, transcripts: JSONReadValue) -> list[Block]:
    """Judge calls and parse failures, and transcripts the repetition filter dropped."""
    items = []
    setting = judge.get("setting") if isinstance(judge, Mapping) else None
    if isinstance(setting, Mapping):
        top_p = setting.get("top_p")
        items.append(
            f"judge setting {setting.get('judge_protocol')}: model {setting.get('model')}, "
            f"temperature {fmt_num(setting.get('temperature'))}"
            + (f", top_p {fmt_num(top_p)}" if top_p is not None else "")
            + f", max_tokens {setting.get('max_tokens')}, prompt {setting.get('prompt')}"
        )
    if isinstance(judge, Mapping) and judge.get("calls"):
        items.append(
            f"judge calls {judge.get('calls', 0)}, parse failures "
            f"{judge.get('parse_failures', 0)} (rate {fmt_num(judge.get('parse_failure_rate'))})"
        )
        per_dimension = judge.get("by_dimension")
        if isinstance(per_dimension, Mapping) and len(per_dimension) > 1:
            items.append(
                "parse failures by dimension: "
                + ", ".join(
                    f"{dim} {c.get('parse_failures', 0)} of {c.get('calls', 0)} calls"
                    for dim, c in per_dimension.items()
                    if isinstance(c, Mapping)
                )
            )
        if "transcripts_without_score" in judge:
            items.append(
                f"transcripts the judge gave no readable score: "
                f"{judge.get('transcripts_without_score', 0)}; checklist scores over fewer than k "
                f"transcripts: {judge.get('scores_over_fewer_than_k_transcripts', 0)}"
            )
    if isinstance(transcripts, Mapping) and transcripts.get("units_with_transcripts"):
        items.append(
            f"transcripts dropped by the repetition (hallucination) filter: "
            f"{transcripts.get('rejected_by_repetition_filter', 0)} over "
            f"{transcripts.get('units_with_transcripts', 0)} units"
        )
    return [Heading(3, "Judge reliability"), BulletList(items)] if items else []


def perturbation_blocks(effects: JSONReadValue) -> list[Block]:
    """Per condition and metric: the mean per-scenario delta vs the baseline, its CI, the
    sign-flip p-value and the Holm-adjusted one."""
    if not isinstance(effects, Mapping):
        return []
    baseline = effects.get("baseline", "clean")
    heading = Heading(3, f"Perturbation effects (vs {baseline})")
    if effects.get("note"):
        return [heading, Paragraph(str(effects["note"]) + ".")]
    rows = [
        [
            str(e["condition"]),
            str(e["metric"]),
            fmt_mean_ci(section(e["delta"])),
            str(e.get("scenarios", 0)),
            str(whole_total(e.get("not_run"))),
            f"{fmt_num(e['p_value'])} ({e.get('test')})",
            fmt_num(e.get("p_holm")),
            "yes" if e.get("significant") else "no",
        ]
        for e in objects(effects.get("effects"))
    ]
    blocks: list[Block] = [
        heading,
        Paragraph(
            f"delta = mean over scenarios of (scenario mean in the condition - scenario mean "
            f"in {baseline}), scenarios scored in both; 95% bootstrap CI over scenarios; p = "
            f"two-sided paired sign-flip permutation test (exact up to "
            f"{effects.get('exact_max_scenarios')} scenarios, else "
            f"{effects.get('monte_carlo_resamples'):,} seeded random sign assignments); Holm p "
            f"adjusts across the conditions of each metric; significant = Holm p < "
            f"{effects.get('alpha')}; not run = scores without a value in either condition, "
            "left out."
        ),
    ]
    if rows:
        header = ["condition", "metric", "delta [95% CI]", "scenarios", "not run", "p", "Holm p"]
        blocks.append(TableBlock([*header, "significant"], rows))
    skipped = [
        f"{s['condition']}, {s['metric']}: {s['reason']}"
        for s in objects(effects.get("not_compared"))
    ]
    if skipped:
        blocks += [Paragraph("Not compared:"), BulletList(skipped)]
    return blocks


def variance_blocks(components: JSONReadValue) -> list[Block]:
    """Variance between scenarios, between trials of a scenario and, for metrics graded
    repeatedly, between the judge's gradings of one call; per metric and condition."""
    if not isinstance(components, Mapping) or not components.get("by_metric"):
        return []
    rows = [
        [
            metric,
            condition,
            fmt_num(c.get("between_scenarios")),
            fmt_num(c.get("within_scenario")),
            fmt_num(c.get("judge_repeat")) if "judge_repeat" in c else "–",
            fmt_num(c.get("scenario_share")),
            str(c.get("scenarios", 0)),
            str(c.get("n", 0)),
            str(c.get("note", "")),
        ]
        for metric, by_condition in section(components["by_metric"]).items()
        for condition, c in sections(by_condition)
    ]
    judge = section(components.get("judge_repeat"))
    judge_note = (
        f"measured for {', '.join(str(m) for m in entries(judge.get('metrics')))} "
        f"({judge.get('estimator')})"
        if judge.get("available")
        else judge.get("reason", "not reported")
    )
    header = ["metric", "condition", "between scenarios", "within scenario (trials)", "judge"]
    return [
        Heading(3, "Variance components"),
        Paragraph(
            f"Estimator: {components.get('estimator')}; scenario share = between scenarios / "
            f"the sum of the components. Judge-repeat component: {judge_note}."
        ),
        TableBlock([*header, "scenario share", "scenarios", "n", "note"], rows),
    ]


def trial_count_blocks(curves: JSONReadValue) -> list[Block]:
    """Width of the 95% CI of the mean when only the first k trials of each scenario count."""
    if not isinstance(curves, Mapping) or not curves:
        return []
    most = max(
        (
            len(entries(curve))
            for by_condition in curves.values()
            for curve in section(by_condition).values()
        ),
        default=0,
    )
    rows = [
        [metric, condition]
        + [fmt_num(section(point).get("width")) for point in entries(curve)]
        + ["–"] * (most - len(entries(curve)))
        for metric, by_condition in curves.items()
        for condition, curve in section(by_condition).items()
    ]
    header = ["metric", "condition", *[f"k={k}" for k in range(1, most + 1)]]
    return [
        Heading(3, "CI width by trials per scenario"),
        Paragraph(
            "Width of the 95% bootstrap CI of the mean over scenarios using only each "
            "scenario's first k trials (– = no interval, e.g. all values equal)."
        ),
        TableBlock(header, rows),
    ]


def headline_blocks(systems: JSONReadObject) -> list[Block]:
    """The answer first: one row per metric, one column per system, mean [95% CI] of each
    system's ``overall`` (the breakdowns follow in each system's section)."""
    shown = {n: e for n, e in sections(systems) if e.get("overall")}
    if not shown:
        return []
    metrics = list(dict.fromkeys(m for e in shown.values() for m in section(e["overall"])))
    rows = []
    for metric in metrics:
        cells = [metric]
        for entry in shown.values():
            stat = section(entry["overall"]).get(metric)
            cells.append(fmt_mean_ci(stat) if is_stat(stat) else "–")
        rows.append(cells)
    return [
        Heading(2, "Headline results"),
        Paragraph("Mean and 95% CI of each metric over each system's scored units."),
        TableBlock(["metric", *shown], rows),
    ]


def statistics_text(systems: JSONReadObject) -> str:
    """One or two sentences on how the intervals were computed, from the systems' notes."""
    notes = [note for _, e in sections(systems) if isinstance(note := e.get("statistics"), Mapping)]
    if not notes:
        return "Means with 95% confidence intervals; n = number of scored units."
    unit = " / ".join(sorted({str(n.get("unit", "item")) for n in notes}))
    members = UNIT_MEMBERS.get(unit, "trials and conditions")
    confidence = as_float(notes[0].get("confidence", 0.95))
    resamples = as_int(notes[0].get("resamples", 0))
    rates = sorted({str(m) for n in notes for m in entries(n.get("rate_metrics"))})
    named = f" ({', '.join(rates)})" if rates else ""
    return (
        f"Intervals are {confidence:.0%} confidence intervals that resample the independent "
        f"unit, the {unit} (all its {members} together): means use a cluster bootstrap "
        f"({resamples:,} seeded percentile resamples of whole {_plural(unit)}); pass/fail "
        f"rates{named} and pass rates use the Wilson interval on the effective number of "
        "units (n divided by the design effect of the clustering). n = scored units, with "
        f"the number of {_plural(unit)} in parentheses where it differs; where the data give no "
        "interval the reason is shown instead."
    )


def comparison_count_text(counts: Mapping[str, Mapping[str, int]]) -> str:
    """``pairwise: done 12, pending 1`` per step (zero counts left out)."""
    parts = []
    for step, by_status in counts.items():
        shown = ", ".join(f"{status.replace('_', ' ')} {n}" for status, n in by_status.items() if n)
        parts.append(f"{step}: {shown or 'none'}")
    text = "Comparisons across systems: " + "; ".join(parts) + "."
    missing = sum(n for by in counts.values() for status, n in by.items() if status != "done")
    if missing:
        text += (
            f" Warning: {missing} comparisons are not done (pending, failed or not run) and "
            "their missing results are left out of the comparison tables; run again or "
            "`voxeval score` to complete them."
        )
    return text


def _difference_cells(stat: JSONReadValue) -> list[str]:
    return [fmt_num(stat.get("mean")), fmt_ci(stat)] if is_stat(stat) else ["–", "–"]


def pairwise_blocks(pairwise: JSONReadObject) -> list[Block]:
    """The pairwise table: per pair and metric, A's wins/ties/losses and win rate."""
    rows = []
    not_compared = []
    for pair in objects(pairwise.get("pairs")):
        a, b = str(pair.get("a")), str(pair.get("b"))
        for metric, stat in sections(pair.get("metrics")):
            rows.append(
                [a, b, metric, f"{stat.get('better')} is better",
                 str(stat.get("wins", 0)), str(stat.get("ties", 0)), str(stat.get("losses", 0)),
                 *stat_cells(stat, _plural(str(pairwise.get("unit", "item")))),
                 *_difference_cells(stat.get("difference"))]
            )  # fmt: skip
        for metric, skipped in sections(pair.get("not_compared")):
            count, reason = skipped.get("count"), skipped.get("reason")
            not_compared.append(f"{a} vs {b}, {metric}: {count} not compared ({reason})")
    if not rows and not not_compared:
        return []
    header = ["A", "B", "metric", "direction", "A wins", "ties", "B wins"]
    header += ["A win rate", "95% CI", "n", "mean A - B", "95% CI"]
    blocks: list[Block] = [
        Heading(2, "Pairwise"),
        Paragraph(
            "Each pair of systems compared on the same item, condition and trial, per metric: "
            "A wins when its value is better in the metric's direction. Win rate counts ties "
            "as half; mean A - B is the paired difference on the common items; both "
            "intervals resample whole queries."
        ),
        TableBlock(header, rows),
    ]
    if not_compared:
        blocks += [Heading(3, "Not compared"), BulletList(not_compared)]
    return blocks


def confound_blocks(confounded: JSONReadObject) -> list[Block]:
    """A warning per speaker-profile dimension confounded with the TTS engine."""
    notes = [str(entry.get("note", name)) for name, entry in sections(confounded)]
    return [BulletList([f"**Warning:** {note}." for note in notes])] if notes else []


def _wer_row(label: list[str], stat: JSONReadObject) -> list[str]:
    ovrl = stat.get("dnsmos_ovrl")
    return [
        *label,
        fmt_num(stat["corpus_wer"]),
        fmt_mean_ci(stat),
        fmt_num(stat["median"]),
        fmt_mean_ci(ovrl) if isinstance(ovrl, Mapping) and is_stat(ovrl) else "–",
        fmt_n(stat, "queries"),
    ]


def intelligibility_blocks(conditions: JSONReadObject) -> list[Block]:
    """The input ASR's WER and the DNSMOS of the user-side audio, per condition and per
    speaker profile, and what they mean for the results."""
    if not conditions:
        return []
    if "not_run" in conditions:
        return [Paragraph(f"User-side ASR error: not run ({conditions['not_run']}).")]
    header = ["corpus WER", "mean WER [95% CI]", "median", "DNSMOS OVRL [95% CI]", "n"]
    rows = [_wer_row([c], stat) for c, stat in sections(conditions)]
    profile_rows = [
        _wer_row([c, profile], p_stat)
        for c, stat in sections(conditions)
        for profile, p_stat in sections(stat.get("by_profile"))
    ]
    asr = next((str(s["asr"]) for _, s in sections(conditions) if s.get("asr")), "the input ASR")
    blocks: list[Block] = [
        Heading(3, "User-side ASR error by condition"),
        Paragraph(
            f"How well {asr} heard each rendered query (its WER against the query text) and "
            "how clean the query audio is (DNSMOS overall, 1-5)."
        ),
        TableBlock(["condition", *header], rows),
    ]
    if profile_rows:
        blocks += [
            Heading(3, "User-side ASR error by speaker profile"),
            TableBlock(["condition", "profile", *header], profile_rows),
        ]
    clean = section(conditions.get("clean"))
    limit = clean.get("wer_limit")
    if limit is not None:
        over = [str(profile) for profile in entries(clean.get("over_limit"))]
        verdict = (
            f"**Warning:** clean queries of {', '.join(over)} are misheard above the "
            f"{limit:.0%} limit: a low score there may mean the voice was hard to hear, not "
            "that the system answered badly."
            if over
            else f"Every profile's clean queries are heard within the {limit:.0%} WER limit."
        )
        blocks.append(Paragraph(verdict))
    return blocks


def input_check_blocks(summary: JSONReadObject) -> list[Block]:
    """The "Input checks" section: could the systems hear the queries, and were they spoken
    by natural voices."""
    heard = intelligibility_blocks(section(summary.get("input_intelligibility")))
    voices = section(summary.get("voices"))
    notes = [str(v["note"]) for v in voices.values() if isinstance(v, Mapping) and v.get("note")]
    if not heard and not notes:
        return []
    blocks: list[Block] = [
        Heading(2, "Input checks"),
        Paragraph(
            "A system cannot answer what it cannot hear. These checks measure the rendered "
            "queries themselves, before any system: where the input is misheard or the voice "
            "is not natural, part of a drop in that condition or profile comes from the input, "
            "so compare systems within it rather than read it as the systems' own weakness."
        ),
    ]
    if notes:
        blocks += [Heading(3, "Voices"), BulletList(notes)]
    return blocks + heard


def build_document(summary: JSONReadObject) -> list[Block]:
    suite = section(summary.get("suite"))
    systems = section(summary.get("systems"))
    blocks: list[Block] = [
        Heading(1, f"voxeval report: {suite.get('name', '?')}"),
        Paragraph(
            f"Run {summary.get('run_id')} · protocol {suite.get('protocol')} · seed "
            f"{summary.get('seed')} · generated {summary.get('generated_at')} · provenance in "
            f"{summary.get('provenance')}."
        ),
        *headline_blocks(systems),
        Paragraph(statistics_text(systems)),
    ]
    blocks += confound_blocks(section(summary.get("confounded")))
    for name, entry in sections(systems):
        blocks += system_blocks(name, entry)
    if summary.get("comparisons"):
        counts = {
            step: {status: n for status, n in by_status.items() if isinstance(n, int)}
            for step, by_status in sections(summary["comparisons"])
        }
        blocks.append(Paragraph(comparison_count_text(counts)))
    blocks += arena_protocol_blocks(summary.get("arena"))
    pairwise = summary.get("pairwise")
    if isinstance(pairwise, Mapping):
        blocks += pairwise_blocks(pairwise)
    blocks += arena_blocks(summary.get("arena"))
    blocks += input_check_blocks(summary)
    usage = section(summary.get("usage"))
    if usage.get("by_provider"):
        blocks += [
            Heading(2, "Judge and provider usage"),
            usage_table(section(usage["by_provider"]), "provider"),
            Paragraph(
                "calls are logical calls (a reply, a judge call, a decode, a turn); requests "
                "are the HTTP requests they sent, retries included (a cached answer sends "
                "none); retries and timeouts are among the requests."
            ),
        ]
        unknown = section(usage.get("total")).get("calls_without_cost")
        if unknown:
            blocks.append(Paragraph(f"{unknown} calls had no configured price; not in the cost."))
    blocks += cost_blocks(summary.get("costs"))
    return blocks
