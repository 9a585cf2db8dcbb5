"""The report warns when a speaker-profile dimension is confounded with the TTS engine."""

from __future__ import annotations

from voxeval.report.document import BulletList, build_document, confound_blocks
from voxeval.report.markdown import render_markdown

NOTE = "age is confounded with the TTS engine (adult on flite; senior on espeak)"


def test_confounded_dimensions_are_a_warning_in_the_report() -> None:
    summary = {"suite": {"name": "s"}, "systems": {}, "confounded": {"age": {"note": NOTE}}}
    assert confound_blocks(summary["confounded"]) == [BulletList([f"**Warning:** {NOTE}."])]
    assert BulletList([f"**Warning:** {NOTE}."]) in build_document(summary)
    assert NOTE in render_markdown(summary)


def test_no_confound_no_warning() -> None:
    assert confound_blocks({}) == []
    assert "confounded" not in render_markdown({"suite": {"name": "s"}, "systems": {}})
