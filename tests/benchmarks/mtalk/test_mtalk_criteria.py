"""Criteria read out of the released rubric prompts."""

from __future__ import annotations

from voxeval.benchmarks.mtalk.mtalk_criteria import criteria_by_level, parse_criteria


def test_json_and_bullet_forms_and_answer_templates() -> None:
    general = (
        "Rate the dialogue.\n"
        '{"criteria_s_2": "Does the reply answer the last question?", '
        '"criteria_s_1": "Is the speech fluent?"}\n'
        "- criteria_m_1 — Does the reply react to the background noise?\n"
        'Output: {"criteria_s_1": 0 or 1, "criteria_s_2": true/false, "criteria_m_1": 0}\n'
    )
    parsed = parse_criteria([("rubric_prompt_general", general)])
    assert parsed.problems == []
    levels = criteria_by_level(parsed)
    assert [(c.id, c.text) for c in levels["general"]] == [
        ("criteria_s_1", "Is the speech fluent?"),
        ("criteria_s_2", "Does the reply answer the last question?"),
    ]
    assert [(c.id, c.text) for c in levels["dimension"]] == [
        ("criteria_m_1", "Does the reply react to the background noise?")
    ]
    assert levels["sample"] == []
    assert all(c.status == "accepted" for c in parsed.criteria.values())


def test_problems_name_the_prompt_field() -> None:
    parsed = parse_criteria(
        [
            ("rubric_prompt_specific", 'Output: {"criteria_d_1": 0 or 1}'),
            ("rubric_prompt_general", "criteria_s_1: Is it fluent and clear?\ncriteria_q_1: x"),
            ("rubric_prompt_general", "criteria_s_1: Is it short and polite?"),
        ]
    )
    assert parsed.problems == [
        (
            "rubric_prompt_general",
            "'criteria_q_1' is not a criterion id (criteria_s_N, criteria_m_N, criteria_d_N)",
        ),
        (
            "rubric_prompt_general",
            "criteria_s_1: defined twice ('Is it fluent and clear?' / 'Is it short and polite?')",
        ),
        ("rubric_prompt_specific", "criteria_d_1: named without a criterion text"),
    ]
    assert list(parsed.criteria) == ["criteria_s_1"]


def test_table_rows_next_line_text_and_kept_final_punctuation() -> None:
    prompt = (
        "| id | criterion |\n"
        "| criteria_s_1 | Does the reply keep the facts straight (names, dates). |\n"
        "criteria_d_1:\n"
        "    Does the reply mention the rain (or the forecast)?\n"
    )
    parsed = parse_criteria([("rubric_prompt_general", prompt)])
    assert parsed.problems == []
    assert {c.id: c.text for c in parsed.criteria.values()} == {
        "criteria_s_1": "Does the reply keep the facts straight (names, dates).",
        "criteria_d_1": "Does the reply mention the rain (or the forecast)?",
    }
