"""Content density of a dialogue's final reply (MTalk-Bench appendix D.2): the reply is split
into clauses by ``clause_split`` (ours, documented there), a text judge names the clauses that
could be removed without losing information the user needs, and

    density = words in the essential (kept) clauses / all words of the reply

(0..1; the paper shows it x100). The judge answers JSON ``{"removable": [clause numbers]}``;
a number outside the clauses shown or a number given twice is a parse failure, retried and
counted. The prompt is ours."""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from voxeval.json_types import JSONObject
from voxeval.scoring.call_judges.judged_call import run_judge, share_template
from voxeval.scoring.dialogues.clause_split import split_clauses, words
from voxeval.scoring.dialogues.dialogue_record import DialogueScoringResources
from voxeval.scoring.dialogues.dialogue_replies import DialogueReplies
from voxeval.scoring.judge import Judge, JudgeOutputError
from voxeval.scoring.metric import DESCRIPTIVE, metric
from voxeval.scoring.replies.reply_record import ScoringResources
from voxeval.scoring.score import Score

SYSTEM = (
    "You edit what a voice assistant said, looking for words the listener could have been "
    "spared. Answer only with the JSON object you are asked for."
)

USER = """\
The conversation so far, for context:
[conversation]
{context}
[/conversation]

The assistant's last reply, split into numbered clauses:
{clauses}

Which clauses could be deleted without the user losing any information, instruction or
answer they need at this point of the conversation? Repetitions of what was already said,
filler, pleasantries and restatements of the question are removable; a clause that carries
something the user needs is essential, even if it could be shorter. Answer as
{{"removable": [clause numbers]}}, using the numbers shown; [] when every clause is needed."""


def density_schema(clause_count: int) -> JSONObject:
    """Clause numbers 1..``clause_count``, each at most once."""
    return {
        "type": "object",
        "properties": {
            "removable": {
                "type": "array",
                "items": {"type": "integer", "minimum": 1, "maximum": clause_count},
                "uniqueItems": True,
            }
        },
        "required": ["removable"],
        "additionalProperties": False,
    }


TEMPLATE = share_template("mtalk-content-density", SYSTEM, USER)


def removable_clauses(answer: JSONObject, clause_count: int) -> list[int]:
    """The judge's removable clause numbers (1-based), checked again in case a provider
    dropped the schema: in range and given once."""
    found = answer.get("removable")
    if not isinstance(found, list):
        raise JudgeOutputError("'removable' is not a list")
    seen: list[int] = []
    for number in found:
        if isinstance(number, bool) or not isinstance(number, int):
            raise JudgeOutputError(f"clause number {number!r} is not an integer")
        if not 1 <= number <= clause_count:
            raise JudgeOutputError(f"clause {number} does not exist (1..{clause_count})")
        if number in seen:
            raise JudgeOutputError(f"clause {number} is named twice")
        seen.append(number)
    return sorted(seen)


def density(clauses: list[str], removable: list[int]) -> float:
    """Words in the clauses not listed in ``removable`` (1-based) / all words."""
    counts = [len(words(c)) for c in clauses]
    total = sum(counts)
    if total == 0:
        raise ValueError("no words to measure")
    kept = sum(n for i, n in enumerate(counts, start=1) if i not in removable)
    return kept / total


def _rate(answer: JSONObject, clauses: list[str]) -> float:
    return density(clauses, removable_clauses(answer, len(clauses)))


def _score(clauses: list[str], value: float, answer: JSONObject) -> Score:
    removable = removable_clauses(answer, len(clauses))
    counts = [len(words(c)) for c in clauses]
    return Score(
        value=value,
        details={
            "clauses": clauses,
            "removable": removable,
            "essential_words": sum(n for i, n in enumerate(counts, 1) if i not in removable),
            "total_words": sum(counts),
        },
    )


def judge_content_density(judge: Judge, reply_text: str, context: str = "") -> Score:
    """Content density of ``reply_text`` (the final reply) given the conversation before it;
    not run for a reply without words; pending when the judge never answers in format."""
    clauses = split_clauses(reply_text)
    if not clauses:
        return Score.not_run("the final reply has no words")
    template = replace(
        TEMPLATE, schema=density_schema(len(clauses)), rate=partial(_rate, clauses=clauses)
    )
    numbered = "\n".join(f"[{i}] {clause}" for i, clause in enumerate(clauses, start=1))
    variables = {"context": context or "(no earlier turns)", "clauses": numbered}
    return run_judge(judge, template, variables, partial(_score, clauses), {})


def dialogue_context(record: DialogueReplies) -> str:
    """The user turns and the replies before the final reply, one line each."""
    lines: list[str] = []
    for turn in record.turns:
        if turn.user_text:
            lines.append(f"User (turn {turn.index}): {turn.user_text}")
        if turn is not record.final and turn.reply_text:
            lines.append(f"Assistant (turn {turn.index}): {turn.reply_text}")
    return "\n".join(lines)


@metric(
    "content_density",
    better="higher",
    failure=DESCRIPTIVE,  # a failed reply has no words to weigh
    protocols=(),
)
def content_density(
    record: DialogueReplies, resources: ScoringResources | DialogueScoringResources
) -> Score:
    final = record.final
    if final is None or not (final.reply_text or "").strip():
        return Score.not_run("the dialogue has no final reply text")
    judge = resources.judge()  # ProviderUnavailable -> not run with the reason
    return judge_content_density(judge, final.reply_text or "", dialogue_context(record))
