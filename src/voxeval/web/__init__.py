"""What the rater app and the run viewer share: page templates with autoescaping, the
packaged stylesheet (no CDN: every asset ships in the package) and a uvicorn launcher that
never logs request lines (invite tokens may appear in URLs)."""

from voxeval.web.assets_path import ASSETS_DIR, FAVICON, TEMPLATES_DIR
from voxeval.web.ids import MAX_ROW_ID, storable_id
from voxeval.web.serving import free_port, serve
from voxeval.web.templating import template_environment

__all__ = [
    "ASSETS_DIR",
    "FAVICON",
    "MAX_ROW_ID",
    "TEMPLATES_DIR",
    "free_port",
    "serve",
    "storable_id",
    "template_environment",
]
