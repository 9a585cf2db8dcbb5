"""Jinja2 environments for server-rendered pages: an app's own templates first, then the
shared ``base.html``; autoescaping is always on (rater input and run text are untrusted)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from voxeval.errors import ConfigError
from voxeval.web.assets_path import TEMPLATES_DIR

if TYPE_CHECKING:
    import jinja2


def template_environment(*template_dirs: Path) -> jinja2.Environment:
    """An environment searching ``template_dirs`` in order, then the shared templates."""
    try:
        import jinja2
    except ImportError as exc:  # the `web` extra is optional
        raise ConfigError("the web pages need the 'web' extra: pip install 'voxeval[web]'") from exc
    loader = jinja2.FileSystemLoader([str(d) for d in (*template_dirs, TEMPLATES_DIR)])
    return jinja2.Environment(
        loader=loader,
        autoescape=True,
        undefined=jinja2.StrictUndefined,  # a missing value is a bug, not an empty string
        trim_blocks=True,
        lstrip_blocks=True,
    )
