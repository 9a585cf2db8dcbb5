"""How the single-turn checklist judge is set up: voxeval's own setting (the default) or the
WildSpeech-Bench reference setting, optionally with a prompt template file of the user's.

The reference setting reproduces what the published judge script does around its prompt:
sampling at temperature 0.5 with top_p 0.95 and at most 1024 tokens, one user message (no
system message), a three-point general checklist (follow the instruction, be factually
correct, no large amount of repeated content) before the query's own points, and the 1-10
score read from a final ``Score: N`` line. The prompt wording here is voxeval's: to use a
paper's exact prompt, put it in a file and name it as ``judge_prompt`` (placeholders
``{query}``, ``{response}`` and ``{checklist}``; any other braces are kept as text).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from voxeval.errors import ConfigError
from voxeval.scoring.judge import JudgeTemplate

JudgeProtocol = Literal["voxeval", "reference"]
JUDGE_PROTOCOLS: tuple[str, ...] = ("voxeval", "reference")
PLACEHOLDERS = ("query", "response", "checklist")

# The reference's general checklist, in our words (same three points, same order).
REFERENCE_GENERAL_CHECKLIST: tuple[str, ...] = (
    "Following the user's instruction is essential: a reply that does not do fully what was "
    "asked has a serious error.",
    "Being correct is essential: a factual mistake in the reply is a serious flaw.",
    "A reply that repeats a large amount of its content has a serious flaw.",
)

# Our wording of a reference-shaped prompt: one user message, the score bands of the
# WildSpeech protocol, the final "Score: N" line.
REFERENCE_USER = """\
You are an expert judge of AI assistants that talk with people by voice. Both the user's \
request and the assistant's answer were spoken; you get text transcripts of them. Grade the \
answer as spoken communication.

Request:
<<<query
{query}
query>>>

Answer:
<<<response
{response}
response>>>

Checklist (guidance for your judgement, not an answer key; other aspects may count too, and \
a good answer need not cover every point):
<<<checklist
{checklist}
checklist>>>

Score from 1 to 10:
1-2: worthless: irrelevant, or wrong or flawed throughout.
3-4: some value, but several factual errors or serious flaws, or the need is poorly met.
5-6: flawed: small errors or gaps, yet the need is broadly met.
7-8: meets the need well, at most very small issues.
9-10: excellent, hardly anything to improve.

First work out what the user wants, then assess the answer, listing its strengths and \
weaknesses. Put your score on the last line, exactly like this:
Score: N"""

_PLACEHOLDER = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True)
class ChecklistJudging:
    """The checklist judge's setting: prompt, general checklist and sampling."""

    protocol: JudgeProtocol
    template: JudgeTemplate
    general_checklist: tuple[str, ...]
    temperature: float
    max_tokens: int
    top_p: float | None = None
    prompt_file: str | None = None

    def describe(self) -> dict[str, str | float | int | None]:
        """What the report names: the setting, its sampling and where the prompt came from."""
        return {
            "judge_protocol": self.protocol,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "prompt": self.prompt_file or f"built-in ({self.template.name})",
            "general_checklist_points": len(self.general_checklist),
        }


def template_from_file(path: Path) -> JudgeTemplate:
    """A score-line template whose user message is the file's text. It must use each of
    ``{query}``, ``{response}`` and ``{checklist}`` and no other ``{name}``; every other
    brace is literal text."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"scoring.judge_prompt: cannot read {path}: {exc}") from exc
    found = set(_PLACEHOLDER.findall(text))
    missing = [p for p in PLACEHOLDERS if p not in found]
    unknown = sorted(found - set(PLACEHOLDERS))
    if missing or unknown:
        problems = []
        if missing:
            problems.append("missing " + ", ".join("{" + p + "}" for p in missing))
        if unknown:
            problems.append("unknown " + ", ".join("{" + p + "}" for p in unknown))
        raise ConfigError(
            f"scoring.judge_prompt: {path}: {'; '.join(problems)} (placeholders: "
            + ", ".join("{" + p + "}" for p in PLACEHOLDERS)
            + ")"
        )
    escaped = text.replace("{", "{{").replace("}", "}}")
    for name in PLACEHOLDERS:
        escaped = escaped.replace("{{" + name + "}}", "{" + name + "}")
    return JudgeTemplate(name=f"file:{path.name}", system="", user=escaped)


def reference_judging(prompt_file: Path | None = None) -> ChecklistJudging:
    """The WildSpeech-Bench reference setting (with the user's prompt file, if given)."""
    template = (
        template_from_file(prompt_file)
        if prompt_file is not None
        else JudgeTemplate(name="wildspeech-reference", system="", user=REFERENCE_USER)
    )
    return ChecklistJudging(
        protocol="reference",
        template=template,
        general_checklist=REFERENCE_GENERAL_CHECKLIST,
        temperature=0.5,
        top_p=0.95,
        max_tokens=1024,
        prompt_file=str(prompt_file) if prompt_file is not None else None,
    )
