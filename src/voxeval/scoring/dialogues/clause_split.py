"""Splitting a reply into clauses for content density (MTalk-Bench appendix D.2).

The split is ours and deliberately simple, so that anyone can reproduce which words a clause
holds. A clause ends:

- at the end of a sentence: ``.``, ``!``, ``?`` or ``…`` followed by a space or the end (a
  decimal point such as ``3.5`` is not followed by a space, so it never splits);
- at ``;`` or ``:`` followed by a space, and at a line break (list items are clauses);
- before a coordinating or subordinating word that follows a comma: ``, and``, ``, but``,
  ``, or``, ``, so``, ``, yet``, ``, because``, ``, which``, ``, while``, ``, although``,
  ``, though``, ``, since``, ``, unless``, ``, whereas``, ``, where``, ``, when``, ``, if``
  (the word starts the next clause).

Commas inside a clause (lists, addresses, numbers) do not split it. A piece with no word
(only punctuation or a list bullet) joins the clause before it. Words are runs of letters or
digits with inner apostrophes or hyphens, and numbers with a decimal point or thousands
separator (``don't``, ``follow-up``, ``3.5``, ``1,200`` count once).

Known limits: the last item of a list written with a comma before ``and`` becomes a clause of
its own, and an abbreviation with a full stop (``Dr. Lee``) ends a clause.
"""

from __future__ import annotations

import re

_CONNECTIVES = (
    "and|but|or|so|yet|because|which|while|although|though|since|unless|whereas|where|when|if"
)
# Zero-width boundaries: after sentence/colon punctuation followed by a space, at line
# breaks, and before a connective that follows a comma.
_BOUNDARY = re.compile(
    r"(?<=[.!?…;:])\s+|\s*\n\s*|(?<=,)\s+(?=(?:" + _CONNECTIVES + r")\b)",
    re.IGNORECASE,
)
_WORD = re.compile(r"[^\W_]+(?:(?:['’\-]|(?<=\d)[.,](?=\d))[^\W_]+)*")


def words(text: str) -> list[str]:
    """The words of ``text`` as content density counts them."""
    return _WORD.findall(text)


def split_clauses(text: str) -> list[str]:
    """The clauses of ``text`` in order, stripped; every word of ``text`` is in exactly one."""
    clauses: list[str] = []
    for piece in _BOUNDARY.split(text or ""):
        piece = piece.strip()
        if not piece:
            continue
        if not words(piece) and clauses:
            clauses[-1] = f"{clauses[-1]} {piece}"
        elif words(piece):
            clauses.append(piece)
    return clauses
