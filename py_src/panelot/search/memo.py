"""The terms of the texts a query checked last: search as you type checks them again.

A query verifies each candidate on its text as ``panelot_v1`` holds it now, which means
splitting that text into terms (:func:`~panelot.search.text.index_terms`); the next
keystroke, or the next query, checks mostly the same candidates. :class:`TermsMemo`
keeps, per doc id, the text last split and its ``index_terms``; an entry serves only a
text equal to the one it was made from (one ``==``, a ``memcmp`` of the two strings),
so what it gives is always ``index_terms`` of the text asked about, whatever changed
meanwhile. It is bounded by the characters of the texts it holds (the least recently
used go first) and is pure: no I/O, the standard library only.
"""

from __future__ import annotations

from collections import OrderedDict

from panelot.search.text import index_terms

__all__ = ["MAX_CHARS", "TermsMemo"]

MAX_CHARS = 2_000_000
"""The most characters of text a memo holds (with their terms: a few MB)."""

Terms = tuple[dict[str, tuple[int, ...]], int]
"""``({term: (positions)}, length)``: :func:`~panelot.search.text.index_terms`' terms.

The positions are tuples: the collector stops tracking a tuple of ints, so the entries
add one tracked object each (their dict), not one per term (a list of positions would
be), and a full collection does not walk them.
"""


class TermsMemo:
    """``index_terms`` of recently checked texts, by doc id (see the module)."""

    __slots__ = ("_chars", "_entries", "max_chars")

    def __init__(self, max_chars: int = MAX_CHARS) -> None:
        self.max_chars = max_chars
        self._entries: OrderedDict[str, tuple[str, Terms]] = OrderedDict()
        self._chars = 0

    @property
    def chars(self) -> int:
        """The characters of the texts held."""
        return self._chars

    def __len__(self) -> int:
        return len(self._entries)

    def terms(self, doc_id: str, text: str) -> Terms:
        """``index_terms(text)``, positions as tuples; from ``doc_id``'s entry if made of ``text``.

        The result is the memo's own: read it, never change it.
        """
        held = self._entries.get(doc_id)
        if held is not None and held[0] == text:
            self._entries.move_to_end(doc_id)
            return held[1]
        positions, length = index_terms(text)
        found = ({term: tuple(at) for term, at in positions.items()}, length)
        if held is not None:
            del self._entries[doc_id]
            self._chars -= len(held[0])
        if len(text) <= self.max_chars:
            self._entries[doc_id] = (text, found)
            self._chars += len(text)
            while self._chars > self.max_chars:
                _, (old, _terms) = self._entries.popitem(last=False)
                self._chars -= len(old)
        return found

    def clear(self) -> None:
        """Drop every entry."""
        self._entries.clear()
        self._chars = 0
