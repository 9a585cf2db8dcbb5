"""The report leads with the answer: the headline table (every system x metric, with
intervals) comes right after the run line, then the breakdowns; the user-side checks come
last, in an "Input checks" section that says what they mean for the results."""

from __future__ import annotations

from voxeval.report.html import render_html
from voxeval.report.markdown import render_markdown

STAT = {"mean": 0.5, "ci_low": 0.25, "ci_high": 0.75, "n": 8}
WER = {"mean": 0.1, "ci_low": 0.05, "ci_high": 0.2, "n": 4, "median": 0.08}
OVRL = {"mean": 3.2, "ci_low": 3.1, "ci_high": 3.3, "n": 4}


def summary() -> dict:
    clean_profiles = {
        "female-adult-bright": {**WER, "corpus_wer": 0.05, "dnsmos_ovrl": OVRL},
        "male-senior-dark": {**WER, "corpus_wer": 0.25, "dnsmos_ovrl": OVRL},
    }
    return {
        "run_id": "r1",
        "suite": {"name": "demo", "protocol": "single_turn"},
        "systems": {
            "only": {"overall": {"checklist": STAT}, "by_condition": {"clean": {"checklist": STAT}}}
        },
        "confounded": {},
        "voices": {
            "female-adult-bright": {"voice": "kokoro:jf_alpha", "note": None},
            "male-senior-dark": {
                "voice": "piper:joe",
                "note": "no natural senior male voice: piper:joe (male adult) shifted toward "
                "the profile",
            },
        },
        "input_intelligibility": {
            "clean": {
                **WER,
                "corpus_wer": 0.12,
                "asr": "whisper-base",
                "dnsmos_ovrl": OVRL,
                "by_profile": clean_profiles,
                "wer_limit": 0.15,
                "over_limit": ["male-senior-dark"],
            }
        },
    }


def test_headline_first_breakdowns_next_input_checks_last() -> None:
    md = render_markdown(summary())
    headline = md.index("## Headline results")
    assert md.index("# voxeval report: demo") < headline
    assert headline < md.index("## System only") < md.index("### By condition")
    assert md.index("### By condition") < md.index("## Input checks")
    assert "| checklist | 0.5 [0.25, 0.75] |" in md[headline : md.index("## System only")]
    checks = md[md.index("## Input checks") :]
    assert "A system cannot answer what it cannot hear" in checks
    assert "no natural senior male voice" in checks
    assert "### User-side ASR error by speaker profile" in checks
    assert "| clean | male-senior-dark | 0.25 | 0.1 [0.05, 0.2] | 0.08 | 3.2 [3.1, 3.3] |" in checks
    assert "clean queries of male-senior-dark are misheard above the 15% limit" in checks
    assert "User-side ASR error" not in md[: md.index("## Input checks")]


def test_html_has_the_same_order() -> None:
    page = render_html(summary())
    assert page.index("<h2>Headline results</h2>") < page.index("<h2>System only</h2>")
    assert page.index("<h2>System only</h2>") < page.index("<h2>Input checks</h2>")
    assert "by speaker profile" in page[page.index("<h2>Input checks</h2>") :]


def test_every_profile_within_the_limit_is_said_plainly() -> None:
    data = summary()
    clean = data["input_intelligibility"]["clean"]
    clean["over_limit"] = []
    md = render_markdown(data)
    assert "Every profile's clean queries are heard within the 15% WER limit." in md
