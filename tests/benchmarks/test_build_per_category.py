from __future__ import annotations

from collections import Counter

from voxeval.benchmarks.build_manifest import first_per_group, plan_jobs
from voxeval.benchmarks.build_options import parse_build_options
from voxeval.benchmarks.wildspeech.query_suite import load_query_suite


def test_per_category_keeps_every_reporting_group() -> None:
    queries = load_query_suite("wild-mini")
    kept = first_per_group(queries, 2)
    groups = Counter(q.report_group for q in kept)
    assert set(groups) == {q.report_group for q in queries}
    assert max(groups.values()) == 2
    options = parse_build_options({"per_category": 2, "profiles": 4, "assign": "rotate"})
    jobs = plan_jobs(queries, options)
    assert len(jobs) == len(kept) * 3  # one profile per query, three conditions
    assert len({j.label for j in jobs}) == 4  # profiles still rotate over the subset
