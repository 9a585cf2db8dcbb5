"""Where the shared static files and base templates live inside the installed package."""

from __future__ import annotations

from pathlib import Path

ASSETS_DIR = Path(__file__).resolve().parent / "assets"
TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"
FAVICON = ASSETS_DIR / "favicon.svg"  # both apps' icon, also answered at /favicon.ico
