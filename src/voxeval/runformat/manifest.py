"""``run.yaml``: the run's identity, its resolved config (secrets scrubbed) and provenance."""

from __future__ import annotations

from pydantic import Field

from voxeval.runformat.base import LEGACY_FORMAT_VERSION, ArtifactModel, StoredJson

RUN_FILE = "run.yaml"


class GitState(ArtifactModel):
    commit: str | None = None
    dirty: bool = False


class Environment(ArtifactModel):
    """Where the run ran: Python, platform, package versions, the git commit."""

    python: str | None = None
    implementation: str | None = None
    platform: str | None = None
    machine: str | None = None
    packages: dict[str, str | None] = Field(default_factory=dict)
    git: GitState | None = None


class RunManifest(ArtifactModel):
    """The run file. ``config`` is kept as recorded (``RunConfig`` parses it where a run
    is executed or re-scored); ``format_version`` is absent in folders written before the
    field existed and then reads as 1."""

    run_id: str = Field(min_length=1)
    format_version: int = LEGACY_FORMAT_VERSION
    created_at: str | None = None
    voxeval_version: str | None = None
    config: StoredJson | None = None
    seed: int | None = None
    environment: Environment | None = None
    started_at: str | None = None
    resumed_at: list[str] = Field(default_factory=list)
    index_url: str | None = None  # a shared index database (password hidden)
    extra: StoredJson = Field(default_factory=dict)
    models: dict[str, list[StoredJson]] = Field(default_factory=dict)  # identities by kind

    @property
    def date(self) -> str | None:
        """When the run started (its creation when it never started)."""
        return self.started_at or self.created_at or None

    @property
    def commit(self) -> str | None:
        """The git commit, ``+dirty`` when the tree had uncommitted changes."""
        git = self.environment.git if self.environment is not None else None
        if git is None or not git.commit:
            return None
        return f"{git.commit}+dirty" if git.dirty else git.commit

    def config_field(self, name: str) -> object:
        return (self.config or {}).get(name)

    def system_names(self) -> list[str]:
        systems = self.config_field("systems")
        if not isinstance(systems, list):
            return []
        return [str(s["name"]) for s in systems if isinstance(s, dict) and s.get("name")]
