"""``report/summary.json``: the run's results per system (docs/runs.md#summaryjson).

The common part is typed; each protocol adds its own sections (``by_pf_subcategory``,
``task_completion``, ``pass_at_k``, ``rubric``, ...) and each comparison step its summary
(``pairwise``, ``arena``) next to it, kept as written."""

from __future__ import annotations

from pydantic import Field

from voxeval.runformat.base import ArtifactModel, Number, StoredJson

SUMMARY_FILE = "summary.json"


class Statistic(ArtifactModel):
    """A mean with its 95% interval over ``n`` units in ``clusters`` independent units;
    ``ci_low``/``ci_high`` None with ``ci_note`` saying why when the data give none.
    Metric-specific extras (``median``, ``wer_corpus``, Wilson's ``n_eff``) are kept."""

    mean: Number | None = None
    ci_low: Number | None = None
    ci_high: Number | None = None
    n: int = 0
    clusters: int | None = None
    method: str | None = None
    ci_note: str | None = None


class UnitCounts(ArtifactModel):
    """``done`` (system faults included), ``failed`` (on our side), ``pending``."""

    done: int = 0
    failed: int = 0
    pending: int = 0
    pending_metrics: int = 0
    system_faults: dict[str, int] = Field(default_factory=dict)
    failed_by_cause: dict[str, int] = Field(default_factory=dict)


class PartialRun(ArtifactModel):
    """A metric that ran for some units: how many it did not run for, and why."""

    not_run: int
    reason: str | None = None


class StatisticsInfo(ArtifactModel):
    unit: str | None = None
    clusters: int | None = None
    resamples: int | None = None
    confidence: Number | None = None
    rate_metrics: list[str] = Field(default_factory=list)


class UsageTotals(ArtifactModel):
    """Usage of one component, system or model (docs/runs.md#usage)."""

    calls: int = 0
    requests: int = 0
    retries: int = 0
    timeouts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: Number | None = None


class UsageSummary(ArtifactModel):
    total: UsageTotals = Field(default_factory=UsageTotals)
    by_provider: dict[str, UsageTotals] = Field(default_factory=dict)
    by_system: dict[str, UsageTotals] = Field(default_factory=dict)
    by_model: dict[str, UsageTotals] = Field(default_factory=dict)


class SystemSummary(ArtifactModel):
    overall: dict[str, Statistic] = Field(default_factory=dict)
    by_category: dict[str, dict[str, Statistic]] = Field(default_factory=dict)
    by_condition: dict[str, dict[str, Statistic]] = Field(default_factory=dict)
    not_run: dict[str, str] = Field(default_factory=dict)
    partial: dict[str, PartialRun] = Field(default_factory=dict)
    pass_rates: dict[str, Statistic] = Field(default_factory=dict)
    statistics: StatisticsInfo | None = None
    units: UnitCounts = Field(default_factory=UnitCounts)
    usage: UsageTotals | None = None


class SuiteRef(ArtifactModel):
    name: str
    protocol: str
    description: str | None = None


class RunSummary(ArtifactModel):
    """The file. Its format version is the run folder's (run.yaml ``format_version``)."""

    run_id: str
    suite: SuiteRef
    seed: int
    generated_at: str | None = None
    provenance: str | None = None
    systems: dict[str, SystemSummary] = Field(default_factory=dict)
    usage: UsageSummary | None = None
    units: UnitCounts = Field(default_factory=UnitCounts)
    comparisons: dict[str, dict[str, int]] = Field(default_factory=dict)  # status counts
    costs: StoredJson | None = None  # report/costs.json (docs/runs.md#costs)

    def section(self, name: str) -> StoredJson | None:
        """A protocol's or comparison step's own top-level section (e.g. ``pairwise``)."""
        value = (self.model_extra or {}).get(name)
        return value if isinstance(value, dict) else None
