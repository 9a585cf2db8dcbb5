"""Rubric criteria read out of the released judge prompts.

The dataset's ``rubric_prompt_general`` and ``rubric_prompt_specific`` list criteria by id —
``criteria_s_N`` (general), ``criteria_m_N`` (dimension), ``criteria_d_N`` (sample) — each
followed on its line by the criterion's text, e.g. ``"criteria_s_1": "Is the reply fluent?"``,
``- criteria_d_2: Does the reply ...`` or ``| criteria_m_1 | Does ... |`` (or, when the id
ends its line, on the next line). A prompt may name an id again without text (an
answer template such as ``{"criteria_s_1": 0 or 1}``): the first mention with text defines
the criterion. A token that starts with ``criteria_`` but is no valid id is reported, as is an
id whose text never appears or differs between two definitions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from voxeval.benchmarks.mtalk.dialogue import CRITERION_ID, Criterion

_TOKEN = re.compile(r"criteria_\w*", re.IGNORECASE)
# Separators around a criterion's text: after the id (": ", " - ", "| ") and at the end of
# the line (quotes, commas, braces of a JSON object, table bars); a closing ')' or '.' is kept.
_LEAD = " \t\"'`:=：-–—>,.;)]}|*"
_TRAIL = " \t\"'`,;{[(|*}]"
# Words of an answer template rather than of a criterion.
_TEMPLATE_WORDS = frozenset(
    {"true", "false", "yes", "no", "or", "and", "score", "value", "bool", "boolean", "int"}
)


@dataclass
class ParsedCriteria:
    criteria: dict[str, Criterion] = field(default_factory=dict)
    # (field, message): the prompt field the problem was found in
    problems: list[tuple[str, str]] = field(default_factory=list)


def _text_after(segment: str) -> str | None:
    text = segment.lstrip(_LEAD).rstrip(_TRAIL).strip()
    words = [w for w in re.findall(r"[A-Za-z]+", text) if w.lower() not in _TEMPLATE_WORDS]
    return text if len(words) >= 2 else None


def _next_line(lines: list[str], number: int) -> str:
    """The next non-empty line after ``number`` when it names no criterion id, else ''."""
    for line in lines[number + 1 :]:
        if line.strip():
            return "" if _TOKEN.search(line) else line
    return ""


def parse_criteria(prompts: list[tuple[str, str]]) -> ParsedCriteria:
    """The criteria defined by ``prompts`` (``(field name, prompt text)`` pairs), and the
    problems found, each with the field it was found in."""
    parsed = ParsedCriteria()
    mentioned: dict[str, str] = {}  # id -> field of its first mention
    for field_name, prompt in prompts:
        lines = prompt.splitlines()
        for number, line in enumerate(lines):
            tokens = list(_TOKEN.finditer(line))
            for index, token in enumerate(tokens):
                ident = token.group(0)
                if not CRITERION_ID.match(ident):
                    parsed.problems.append(
                        (
                            field_name,
                            f"{ident!r} is not a criterion id "
                            "(criteria_s_N, criteria_m_N, criteria_d_N)",
                        )
                    )
                    continue
                mentioned.setdefault(ident, field_name)
                end = tokens[index + 1].start() if index + 1 < len(tokens) else len(line)
                segment = line[token.end() : end]
                if not segment.lstrip(_LEAD).strip() and index + 1 == len(tokens):
                    segment = _next_line(lines, number)  # "criteria_s_1:" then the text below
                text = _text_after(segment)
                if text is None:
                    continue
                known = parsed.criteria.get(ident)
                if known is None:
                    parsed.criteria[ident] = Criterion(id=ident, text=text)
                elif known.text != text:
                    parsed.problems.append(
                        (field_name, f"{ident}: defined twice ({known.text!r} / {text!r})")
                    )
    for ident, field_name in sorted(mentioned.items()):
        if ident not in parsed.criteria:
            parsed.problems.append((field_name, f"{ident}: named without a criterion text"))
    return parsed


def _order(ident: str) -> int:
    match = CRITERION_ID.match(ident)
    return int(match.group(2)) if match else 0


def criteria_by_level(parsed: ParsedCriteria) -> dict[str, list[Criterion]]:
    """``{"general": [...], "dimension": [...], "sample": [...]}``, each sorted by number."""
    levels: dict[str, list[Criterion]] = {"general": [], "dimension": [], "sample": []}
    for ident in sorted(parsed.criteria, key=_order):
        criterion = parsed.criteria[ident]
        levels[criterion.level].append(criterion)
    return levels
