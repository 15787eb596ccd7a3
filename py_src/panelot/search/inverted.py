"""An in-memory inverted index over :mod:`.text` and :mod:`.rank`: add, remove, search.

What a stored index keeps per document is :func:`~panelot.search.text.index_terms` of its
text (the ``terms`` and ``len`` of a ``docs`` record in ``panelot_search_v1``);
:class:`InvertedIndex` holds the same postings in dicts, for the tests of the matching
rules and for any caller that wants the whole index in memory. Pure: no I/O.
"""

from __future__ import annotations

from panelot.search.rank import Bm25, Ranked, Scored, Stats
from panelot.search.text import ParsedQuery, index_terms, parse_query

__all__ = ["InvertedIndex"]


class InvertedIndex:
    """Documents by id, their postings, lengths and the sorted vocabulary."""

    def __init__(self, bm25: Bm25 | None = None) -> None:
        self.bm25 = bm25 or Bm25()
        self.postings: dict[str, dict[str, list[int]]] = {}
        self.lengths: dict[str, int] = {}
        self._terms: dict[str, list[str]] = {}
        self._total = 0
        self._vocabulary: list[str] | None = None

    def __len__(self) -> int:
        return len(self.lengths)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self.lengths

    def add(self, doc_id: str, text: str) -> None:
        """Index ``text`` as ``doc_id``, replacing what that id held."""
        self.remove(doc_id)
        terms, length = index_terms(text)
        for term, positions in terms.items():
            self.postings.setdefault(term, {})[doc_id] = positions
        self._terms[doc_id] = list(terms)
        self.lengths[doc_id] = length
        self._total += length
        self._vocabulary = None

    def remove(self, doc_id: str) -> None:
        """Drop ``doc_id`` (nothing happens if it is not indexed)."""
        terms = self._terms.pop(doc_id, None)
        if terms is None:
            return
        for term in terms:
            docs = self.postings[term]
            del docs[doc_id]
            if not docs:
                del self.postings[term]
        self._total -= self.lengths.pop(doc_id)
        self._vocabulary = None

    @property
    def stats(self) -> Stats:
        """How many documents, and their summed length."""
        return Stats(docs=len(self.lengths), total_len=self._total)

    @property
    def vocabulary(self) -> list[str]:
        """Every indexed term, sorted (kept until the next change)."""
        if self._vocabulary is None:
            self._vocabulary = sorted(self.postings)
        return self._vocabulary

    def search(self, query: ParsedQuery | str, limit: int | None = 20) -> list[Scored]:
        """The documents matching ``query`` (text is parsed first), best first.

        Raises:
            ValidationError: the query text is over the length limit (see parse_query).
        """
        return self.ranked(query, limit).hits

    def ranked(self, query: ParsedQuery | str, limit: int | None = 20) -> Ranked:
        """As :meth:`search`, with the count of every match (``total``) beside the hits."""
        parsed = parse_query(query) if isinstance(query, str) else query
        return self.bm25.rank(
            parsed, self.postings, self.lengths, self.stats, self.vocabulary, limit=limit
        )
