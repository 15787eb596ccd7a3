"""TEMPORARY stand-in for ``panelot.search.text`` (owned by the engine helper, issue 38).

Only what the indexer and the query need to work end to end: :func:`fold`,
:func:`tokens` (a casefold + regex word split with positions; Han/kana/Hangul runs as
character bigrams) with the contract's :class:`Token` shape. The engine's
``panelot.search.text`` replaces this module; nothing outside ``panelot.search``
imports it.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

__all__ = ["Token", "fold", "is_cjk", "tokens"]

_WORD = re.compile(r"[^\W_]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")


@dataclass(frozen=True, slots=True)
class Token:
    """One term of a text: ``start``/``end`` in the original text, ``pos`` its index."""

    term: str
    start: int
    end: int
    pos: int


def fold(text: str) -> str:
    """NFKC, casefold, accents stripped (a lone surrogate passes through unchanged)."""
    try:
        folded = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text).casefold())
    except (TypeError, ValueError):  # pragma: no cover - normalize takes any str
        return text.casefold()
    kept = "".join(c for c in folded if not unicodedata.combining(c))
    return unicodedata.normalize("NFC", kept)


def is_cjk(term: str) -> bool:
    """Whether ``term`` is made of Han, kana or Hangul characters."""
    return bool(_CJK.fullmatch(term))


def tokens(text: str) -> list[Token]:
    """The terms of ``text``, in order, with their offsets and positions."""
    found: list[Token] = []
    for word in _WORD.finditer(text):
        start = word.start()
        chunk = word.group()
        cursor = 0
        for run in _CJK.finditer(chunk):
            if run.start() > cursor:
                _word(found, text, start + cursor, start + run.start())
            _bigrams(found, start + run.start(), run.group())
            cursor = run.end()
        if cursor < len(chunk):
            _word(found, text, start + cursor, start + len(chunk))
    return found


def _word(found: list[Token], text: str, start: int, end: int) -> None:
    term = fold(text[start:end])
    if term:
        found.append(Token(term, start, end, len(found)))


def _bigrams(found: list[Token], start: int, run: str) -> None:
    if len(run) == 1:
        found.append(Token(run, start, start + 1, len(found)))
        return
    for i in range(len(run) - 1):
        found.append(Token(fold(run[i : i + 2]), start + i, start + i + 2, len(found)))
