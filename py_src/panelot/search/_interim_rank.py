"""TEMPORARY stand-in for ``panelot.search.rank`` and the query parser (engine helper).

Just enough for ``search.messages`` to work end to end: :func:`parse_query` (bare
words, quoted phrases, the last bare word as a prefix), :func:`bm25` for one term of
one document, and :func:`snippet`. The engine's ``panelot.search.text``/``rank``
replace it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from panelot.idb.errors import ValidationError
from panelot.search._interim_tokens import Token, is_cjk, tokens

__all__ = ["MAX_QUERY", "ParsedQuery", "bm25", "matches", "parse_query", "snippet"]

MAX_QUERY = 1000
"""The longest query text, in characters."""

_QUOTED = re.compile(r'"([^"]*)"')


@dataclass(slots=True)
class ParsedQuery:
    """What a query asks: every term, the phrases, and the last word as a prefix."""

    terms: list[str] = field(default_factory=list)
    phrases: list[list[str]] = field(default_factory=list)
    prefix: str | None = None

    @property
    def empty(self) -> bool:
        """Whether the query asks for nothing."""
        return not self.terms and not self.phrases and self.prefix is None


def parse_query(text: str) -> ParsedQuery:
    """Parse ``text``; over :data:`MAX_QUERY` characters is a ``ValidationError`` on ``text``."""
    if len(text) > MAX_QUERY:
        raise ValidationError(f"text: at most {MAX_QUERY} characters", field="text")
    parsed = ParsedQuery()
    for quoted in _QUOTED.finditer(text):
        phrase = [t.term for t in tokens(quoted.group(1))]
        if len(phrase) > 1:
            parsed.phrases.append(phrase)
        parsed.terms.extend(t for t in phrase if t not in parsed.terms)
    bare = _QUOTED.sub(" ", text)
    words = [t.term for t in tokens(bare)]
    open_end = bool(bare) and not bare[-1].isspace() and not text.endswith('"')
    if words and ((open_end and not is_cjk(words[-1])) or len(words[-1]) == 1):
        parsed.prefix = words.pop()
    parsed.terms.extend(t for t in words if t not in parsed.terms)
    return parsed


def bm25(tf: int, df: int, docs: int, length: int, average: float) -> float:
    """BM25 (k1 1.2, b 0.75) of one term of one document."""
    idf = math.log(1 + (docs - df + 0.5) / (df + 0.5))
    norm = tf + 1.2 * (0.25 + 0.75 * length / max(average, 1.0))
    return idf * tf * 2.2 / norm


def snippet(
    text: str, query: ParsedQuery, width: int = 160, found: list[Token] | None = None
) -> dict[str, object]:
    """About ``width`` characters of ``text`` around the first match, with highlights.

    ``found``: the tokens of ``text``, when the caller has them already.
    """
    wanted = set(query.terms)
    found = [
        t
        for t in (tokens(text) if found is None else found)
        if t.term in wanted or (query.prefix is not None and t.term.startswith(query.prefix))
    ]
    start = max(0, found[0].start - width // 4) if found else 0
    end = min(len(text), start + width)
    marks = [[t.start - start, t.end - start] for t in found if t.start >= start and t.end <= end]
    return {"snippet": text[start:end], "highlights": marks}


def matches(text: str, query: ParsedQuery, found: list[Token] | None = None) -> bool:
    """Whether ``text`` (as it is now) holds every term, the prefix and every phrase."""
    terms = [t.term for t in (tokens(text) if found is None else found)]
    have = set(terms)
    if any(t not in have for t in query.terms):
        return False
    if query.prefix is not None and not any(t.startswith(query.prefix) for t in have):
        return False
    return all(_has_phrase(terms, phrase) for phrase in query.phrases)


def _has_phrase(terms: list[str], phrase: list[str]) -> bool:
    n = len(phrase)
    return any(terms[i : i + n] == phrase for i in range(len(terms) - n + 1))
