"""The ``scoring:`` section of a live-call run config.

    scoring:
      judge_attempts: 3   # calls per judged call until the answer is in format
      judge_repeats: 3    # independent gradings of each judged call (default 1)

With ``judge_repeats`` > 1 every text-judged call metric grades the call that many times with
distinct seeds; the stored score is the first grading (so results do not depend on the
setting) and all gradings are kept in its details, where the variance decomposition finds them
to separate judge noise from trial noise."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from voxeval.config import RunConfig, format_validation_error
from voxeval.errors import ConfigError


class LiveCallScoring(BaseModel):
    model_config = ConfigDict(extra="forbid")

    judge_attempts: int = Field(
        default=3, ge=1, le=10, description="calls per judged call until the answer is in format"
    )
    judge_repeats: int = Field(
        default=1, ge=1, le=10, description="independent gradings of each judged call"
    )
    turn_taking_zero_on_agent_error: bool = Field(
        default=False,
        description="our addition: a call that ends in agent_error with the caller's words "
        "unanswered scores turn_taking 0, as an agent timeout does (the reference keeps the "
        "mean of its turns)",
    )


def live_call_scoring(config: RunConfig) -> LiveCallScoring:
    try:
        return LiveCallScoring.model_validate(config.scoring)
    except ValidationError as exc:
        raise ConfigError(format_validation_error("config scoring", exc)) from exc
