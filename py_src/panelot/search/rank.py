"""BM25 ranking over an inverted index, with the prefix being typed and phrases.

Pure: the index is handed in as plain mappings, so the same code ranks an in-memory
index (:mod:`.inverted`) and the one read from ``panelot_search_v1``. A search runs in two
steps, so a caller that reads postings from storage reads only what it needs:

1. :meth:`Bm25.needed` lists the terms whose postings the query needs: its exact terms,
   its phrases' terms, and the expansions of its prefix over the sorted vocabulary
   (:meth:`Bm25.expand`, at most :data:`MAX_EXPANSIONS`);
2. :meth:`Bm25.rank` scores the documents that hold every exact term, every phrase (at
   consecutive positions) and at least one expansion of the prefix: words in any order,
   all of them required.

A document's score is the sum of BM25 weights (Lucene's ``idf``, always positive) of its
exact and phrase terms, plus the best weight among the prefix's expansions (a completion
that is not the whole typed word counts :data:`PREFIX_DISCOUNT` of its weight, so the
word itself ranks first). Ties go to the greater document id: ids that grow with time put
the newest first.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import add

from panelot.search.snippet import snippet
from panelot.search.text import ParsedQuery

__all__ = [
    "MAX_EXPANSIONS",
    "PREFIX_DISCOUNT",
    "Bm25",
    "PositionsOf",
    "Postings",
    "Ranked",
    "Scored",
    "Stats",
    "has_phrase",
    "snippet",
]

#: The most vocabulary terms one prefix expands to.
MAX_EXPANSIONS = 50
#: The share of its weight a completion of the prefix counts (the whole word counts 1).
PREFIX_DISCOUNT = 0.8

#: ``{term: {docId: [positions]}}``: where each term stands in each document; or
#: ``{term: {docId: tf}}``, the counts only, with a :data:`PositionsOf` for phrases.
Postings = Mapping[str, Mapping[str, Sequence[int]]] | Mapping[str, Mapping[str, int]]
#: ``(term, docId) -> positions``: where a term stands in a document (for phrases, when
#: the postings hold counts only).
PositionsOf = Callable[[str, str], Sequence[int]]


@dataclass(frozen=True)
class Stats:
    """Corpus statistics: how many documents, and their summed length in tokens."""

    docs: int
    total_len: int

    @property
    def avgdl(self) -> float:
        """The average document length (1.0 for an empty corpus, never a division by 0)."""
        return self.total_len / self.docs if self.docs and self.total_len else 1.0


@dataclass(frozen=True)
class Scored:
    """One ranked document."""

    doc_id: str
    score: float


def has_phrase(positions: Sequence[Sequence[int]]) -> bool:
    """Whether the terms' position lists hold ``p, p+1, ...`` for some ``p``."""
    if not positions or not positions[0]:
        return False
    # A long list is looked up as a set; a short one (the usual case) as it is.
    rest = [set(p) if len(p) > 16 else p for p in positions[1:]]
    for start in positions[0]:
        for offset, later in enumerate(rest, 1):
            if start + offset not in later:
                break
        else:
            return True
    return False


@dataclass(frozen=True)
class Ranked:
    """The best documents (at most the limit asked for) and how many matched in all."""

    hits: list[Scored]
    total: int


def _counts(plist: Mapping[str, Sequence[int] | int], docs: list[str]) -> Iterator[int]:
    """The term's frequency in each of ``docs`` (all of which hold it), in C loops."""
    held = map(plist.__getitem__, docs)
    first = next(iter(plist.values()), 0)
    if isinstance(first, int):
        return held  # type: ignore[return-value]  # counts: the postings hold ints
    return map(len, held)  # type: ignore[arg-type]  # positions lists


def _where(
    term: str,
    doc: str,
    plist: Mapping[str, Sequence[int] | int],
    positions: PositionsOf | None,
) -> Sequence[int]:
    """Where ``term`` stands in ``doc``: from the postings, or asked of ``positions``."""
    held = plist.get(doc, ())
    if not isinstance(held, int):
        return held
    if positions is None:
        raise TypeError("postings of counts need positions= for a phrase")
    return positions(term, doc)


class Bm25:
    """Okapi BM25 with ``k1`` (term-frequency saturation) and ``b`` (length normalization)."""

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b

    def idf(self, df: int, docs: int) -> float:
        """Lucene's BM25 idf: ``ln(1 + (N - df + 0.5) / (df + 0.5))``, always > 0."""
        return math.log(1.0 + (docs - df + 0.5) / (df + 0.5))

    def weight(self, tf: int, length: int, idf: float, avgdl: float) -> float:
        """One term's BM25 weight in a document of ``length`` tokens holding it ``tf`` times."""
        norm = self.k1 * (1.0 - self.b + self.b * length / avgdl)
        return idf * tf * (self.k1 + 1.0) / (tf + norm)

    @staticmethod
    def expand(prefix: str, vocabulary: Sequence[str]) -> list[str]:
        """The terms of the sorted ``vocabulary`` that start with ``prefix``, bounded.

        The whole word first when it is a term, then the completions in sorted order
        (shorter ones before their own completions), at most MAX_EXPANSIONS in all.
        """
        out: list[str] = []
        i = bisect_left(vocabulary, prefix)
        while i < len(vocabulary) and len(out) < MAX_EXPANSIONS:
            term = vocabulary[i]
            if not term.startswith(prefix):
                break
            out.append(term)
            i += 1
        return out

    def needed(self, query: ParsedQuery, vocabulary: Sequence[str]) -> list[str]:
        """Every term whose postings :meth:`rank` reads for ``query``."""
        terms = query.all_terms()
        if query.prefix is not None:
            terms += [t for t in self.expand(query.prefix, vocabulary) if t not in terms]
        return terms

    def rank(
        self,
        query: ParsedQuery,
        postings: Postings,
        lengths: Mapping[str, int],
        stats: Stats,
        vocabulary: Sequence[str],
        *,
        limit: int | None = None,
        positions: PositionsOf | None = None,
    ) -> Ranked:
        """The documents matching ``query``, best first (ties: greater id first).

        ``postings`` must hold every term of :meth:`needed` that the index knows (a term
        it lacks matches nothing); ``lengths`` each candidate document's token count;
        ``vocabulary`` the index's sorted terms (for the prefix). Postings that hold
        counts (``{docId: tf}``) need ``positions`` for the phrases' checks, asked only
        for the documents that hold every term. Scoring goes term by term over the
        candidates; only the best ``limit`` are sorted.
        """
        if query.empty:
            return Ranked([], 0)
        exact = query.all_terms()
        lists: list[Mapping[str, Sequence[int] | int]] = [postings.get(term, {}) for term in exact]
        expansions = [] if query.prefix is None else self.expand(query.prefix, vocabulary)
        prefix_lists: list[tuple[str, Mapping[str, Sequence[int] | int]]] = [
            (term, postings.get(term, {})) for term in expansions
        ]
        prefix_docs: set[str] | None = None
        if query.prefix is not None:
            prefix_docs = set()
            for _, plist in prefix_lists:
                prefix_docs.update(plist)
        candidates = self._candidates(lists, prefix_docs)
        for phrase in query.phrases:
            if not candidates:
                break
            of_phrase: list[tuple[str, Mapping[str, Sequence[int] | int]]] = [
                (term, postings.get(term, {})) for term in phrase
            ]
            candidates = {
                doc
                for doc in candidates
                if has_phrase([_where(term, doc, plist, positions) for term, plist in of_phrase])
            }
        if not candidates:
            return Ranked([], 0)
        docs = max(stats.docs, 1)
        k1, b = self.k1, self.b
        # Column by column over the candidates, so the loops run in C where they can.
        cand = list(candidates)
        slope = k1 * b / stats.avgdl
        norms = [k1 * (1.0 - b) + slope * n for n in map(lengths.get, cand, repeat(1))]
        scores = [0.0] * len(cand)
        for plist in lists:
            scale = self.idf(len(plist), docs) * (k1 + 1.0)
            tfs = _counts(plist, cand)
            scores = [
                s + scale * tf / (tf + n) for s, tf, n in zip(scores, tfs, norms, strict=True)
            ]
        if prefix_lists:
            at = {doc: i for i, doc in enumerate(cand)}
            best = [0.0] * len(cand)
            for term, plist in prefix_lists:
                share = 1.0 if term == query.prefix else PREFIX_DISCOUNT
                scale = share * self.idf(len(plist), docs) * (k1 + 1.0)
                for doc, held in plist.items():
                    i = at.get(doc)
                    if i is not None:
                        tf = held if isinstance(held, int) else len(held)
                        weight = scale * tf / (tf + norms[i])
                        if weight > best[i]:
                            best[i] = weight
            scores = list(map(add, scores, best))
        keyed = zip(scores, cand, strict=True)
        if limit is None or limit >= len(cand):
            top = sorted(keyed, reverse=True)
        else:
            top = heapq.nlargest(limit, keyed)
        return Ranked([Scored(doc, score) for score, doc in top], len(cand))

    @staticmethod
    def _candidates(
        lists: Sequence[Mapping[str, object]], prefix_docs: set[str] | None
    ) -> set[str]:
        """The documents holding every exact term and (if any) one of the prefix's terms."""
        pools: list[set[str] | Mapping[str, object]] = sorted(lists, key=len)
        if prefix_docs is not None:
            pools.append(prefix_docs)
            pools.sort(key=len)
        if not pools:
            return set()
        out = set(pools[0])
        for pool in pools[1:]:
            out.intersection_update(pool)
            if not out:
                break
        return out
