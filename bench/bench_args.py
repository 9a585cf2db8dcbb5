"""Command-line parsing shared by the bench scripts: ``--help`` prints the script's docstring
(what it measures, how to read its figures) above the options."""

from __future__ import annotations

import argparse


def parser_for(doc: str | None) -> argparse.ArgumentParser:
    """An argument parser whose help is ``doc`` (the script's module docstring) as written."""
    return argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
