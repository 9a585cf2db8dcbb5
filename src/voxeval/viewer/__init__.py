"""`voxeval view`: a local web app to browse runs, their units, audio, timelines and scores."""

from voxeval.viewer.app import create_app
from voxeval.viewer.run_catalog import Catalog, RunInfo, discover

__all__ = ["Catalog", "RunInfo", "create_app", "discover"]
