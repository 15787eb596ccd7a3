"""The text shown for a hit: about 160 characters around the best match, highlighted.

The window is the one holding the most distinct query terms (then the most matches, then
the earliest), widened with context on both sides and cut at spaces where one is near;
a cut side gets an ellipsis. Line breaks and tabs become spaces, character for
character. The highlights are ``[start, end]`` pairs in **UTF-16 code units** of the
returned snippet, the indices a JS string uses (the panel slices with them as they are);
they equal code point offsets when the snippet has no character beyond U+FFFF.
"""

from __future__ import annotations

import re
from typing import TypedDict

from panelot.search.text import ParsedQuery, Token, kept_words, parse_query, tokens

__all__ = ["ELLIPSIS", "SNIPPET_CHARS", "Snippet", "snippet"]

#: About how many characters a snippet shows.
SNIPPET_CHARS = 160
#: What stands for the text cut off at either side.
ELLIPSIS = "\u2026"
#: How far from a cut a space is looked for, to cut between words.
_SNAP = 16
_SPACES = re.compile(r"[\t\n\v\f\r\u2028\u2029\x85]")


class Snippet(TypedDict):
    """The snippet text and its highlights (UTF-16 offsets into ``snippet``)."""

    snippet: str
    highlights: list[list[int]]


#: A word of lower-cased ASCII text (as :mod:`.text` splits one).
_ASCII_WORD = re.compile("[a-z0-9]+")


def _ascii_matches(text: str, query: ParsedQuery) -> list[Token]:
    """:func:`_matches` of an ASCII ``text``, found by one regex of the query's terms.

    An ASCII text's terms are its lower-cased ``[a-z0-9]+`` runs, so a match is a whole
    run that is a term or starts with the prefix; no token is built for the others.
    """
    words = sorted((t for t in query.all_terms() if _ASCII_WORD.fullmatch(t)), key=len)
    choices = [re.escape(t) for t in reversed(words)]
    prefix = query.prefix
    if prefix is not None and (not prefix or _ASCII_WORD.fullmatch(prefix)):
        choices.append(re.escape(prefix) + ("[a-z0-9]*" if prefix else "[a-z0-9]+"))
    if not choices:
        return []
    pattern = re.compile(f"(?<![a-z0-9])(?:{'|'.join(choices)})(?![a-z0-9])")
    return [Token(m.group(), m.start(), m.end(), 0) for m in pattern.finditer(text.lower())]


def _word_matches(text: str, query: ParsedQuery) -> list[Token] | None:
    """:func:`_matches` of a text without CJK characters (``None`` for one with them).

    Only the words holding a query term or a completion of its prefix are found
    (:func:`~panelot.search.text.kept_words`): a token is built for those only.
    """
    kept = kept_words(text, set(query.all_terms()), query.prefix)
    return None if kept is None else [Token(term, start, end, 0) for term, start, end in kept]


def _matches(toks: list[Token], query: ParsedQuery) -> list[Token]:
    """The tokens that are a query term, or a completion of its prefix."""
    wanted = set(query.all_terms())
    prefix = query.prefix
    return [
        tok
        for tok in toks
        if tok.term in wanted or (prefix is not None and tok.term.startswith(prefix))
    ]


def _best_window(matches: list[Token], width: int) -> tuple[int, int]:
    """``(first, last)`` indices into ``matches`` of the best window of ``width`` chars.

    Each window starts at a match and takes the matches after it that end within
    ``width`` of its start (at least the first): the one with the most distinct terms,
    then the most matches, then the earliest. One pass, the terms counted as it slides.
    """
    terms = [m.term for m in matches]
    starts = [m.start for m in matches]
    ends = [m.end for m in matches]
    count = len(matches)
    best = (0, 0)
    best_key = (-1, -1)
    counts: dict[str, int] = {}
    last = -1
    for first in range(count):
        if first:  # the previous window's first match leaves
            gone = terms[first - 1]
            left = counts[gone] - 1
            if left:
                counts[gone] = left
            else:
                del counts[gone]
        if last < first:
            last = first
            counts[terms[first]] = counts.get(terms[first], 0) + 1
        reach = starts[first] + width
        while last + 1 < count and ends[last + 1] <= reach:
            last += 1
            counts[terms[last]] = counts.get(terms[last], 0) + 1
        key = (len(counts), last - first + 1)
        if key > best_key:
            best, best_key = (first, last), key
    return best


def _bounds(text: str, lo: int, hi: int, width: int) -> tuple[int, int]:
    """The ``[start, end)`` shown around the matched span ``[lo, hi)``."""
    free = max(0, width - (hi - lo))
    start = max(0, lo - min(free // 2, 60))
    end = min(len(text), start + width)
    start = max(0, min(start, end - width))
    if start > 0:
        space = text.find(" ", start, min(lo, start + _SNAP))
        if space >= 0:
            start = space + 1
    if end < len(text):
        space = text.rfind(" ", max(hi, end - _SNAP), end)
        if space >= 0:
            end = space
    return start, max(end, hi)


def _utf16(text: str) -> list[int]:
    """``out[i]``: the UTF-16 offset of code point offset ``i`` of ``text`` (0..len)."""
    out = [0]
    unit = 0
    for char in text:
        unit += 2 if ord(char) > 0xFFFF else 1
        out.append(unit)
    return out


def snippet(text: str, query: ParsedQuery | str, *, width: int = SNIPPET_CHARS) -> Snippet:
    """About ``width`` characters of ``text`` around the best match, with highlights.

    ``query`` is a :class:`ParsedQuery` or the text typed (parsed here). With no match
    the snippet is the start of ``text``, with no highlights.
    """
    parsed = parse_query(query) if isinstance(query, str) else query
    if text.isascii():
        matches = _ascii_matches(text, parsed)
    else:
        found = _word_matches(text, parsed)
        matches = _matches(tokens(text), parsed) if found is None else found
    if matches:
        first, last = _best_window(matches, width)
        lo = matches[first].start
        hi = min(max(m.end for m in matches[first : last + 1]), lo + width)
        start, end = _bounds(text, lo, hi, width)
    else:
        start, end = _bounds(text, 0, 0, width)
    lead = ELLIPSIS if start > 0 else ""
    body = _SPACES.sub(" ", text[start:end])
    shown = lead + body + (ELLIPSIS if end < len(text) else "")
    spans: list[list[int]] = []
    for tok in matches:
        a = max(tok.start, start) - start + len(lead)
        b = min(tok.end, end) - start + len(lead)
        if a >= b:
            continue
        if spans and a <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], b)
        else:
            spans.append([a, b])
    if spans and not shown.isascii() and max(shown) > "\uffff":
        units = _utf16(shown)
        spans = [[units[a], units[b]] for a, b in spans]
    return {"snippet": shown, "highlights": spans}
