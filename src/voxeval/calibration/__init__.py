"""Judge calibration: labelled development sets generated offline from the built-in domains
by injecting known defects into correct calls, and the agreement of a configured judge with
those labels (``voxeval judges calibrate``)."""

from voxeval.calibration.calibrate import (
    CalibrationPlan,
    CalibrationResult,
    calibrate,
    plan_metrics,
    write_results,
)
from voxeval.calibration.dev_set import CalibrationExample, DevSet, Expected, build_dev_set
from voxeval.calibration.judge_config import build_judge, load_judge_spec

__all__ = [
    "CalibrationExample",
    "CalibrationPlan",
    "CalibrationResult",
    "DevSet",
    "Expected",
    "build_dev_set",
    "build_judge",
    "calibrate",
    "load_judge_spec",
    "plan_metrics",
    "write_results",
]
