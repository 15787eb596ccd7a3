"""Properties of the pure search engine (panelot.search), for any text.

* tokens never raise (lone surrogates, marks, any script), their offsets lie in the
  text and their positions never go back; ``index_terms`` is what ``tokens`` gives;
* ``parse_query`` answers every text up to the limit and refuses longer ones by name;
* searching an index of drawn documents is sound (every hit holds the terms asked for)
  and complete (a word of a document finds it, exact, as a prefix, and a pair of
  neighbouring words as a phrase);
* a snippet's highlights lie inside it, in order, without overlap;
* the query's fast paths agree with the slow ones: ``held_terms`` is ``index_terms``
  kept to the query's terms, and a snippet's matches are the matching ``tokens``;
  an ASCII phrase's pattern matches a text exactly when it holds the phrase, and the
  terms memo gives ``index_terms`` of the text asked about, within its bound.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hypothesis_support import examples
from panelot.idb.errors import ValidationError
from panelot.search.inverted import InvertedIndex
from panelot.search.memo import TermsMemo
from panelot.search.rank import has_phrase, snippet
from panelot.search.snippet import _ascii_matches, _best_window, _matches, _word_matches
from panelot.search.text import (
    MAX_QUERY_CHARS,
    Token,
    ascii_phrase,
    fold,
    held_terms,
    index_terms,
    parse_query,
    tokens,
)

#: Characters that make the interesting cases likely: accents (composed and combining),
#: case, CJK, Cyrillic, quotes, punctuation, a lone surrogate, an astral emoji.
INTERESTING = list('abcéÉE\u0301ßﬁ 配方很好テストすПрИвЕтё.,!?"«»“”_-\n\ud800\udc00😀')
chars = st.sampled_from(INTERESTING) | st.characters() | st.characters(categories=["Cs"])
texts = st.text(chars, max_size=60)

WORDS = [
    "recipe",
    "sumac",
    "sum",
    "café",
    "Cafe",
    "naïve",
    "привет",
    "ПРИВЕТСТВИЕ",
    "ёлка",
    "配方",
    "很好",
    "天气",
    "テスト",
    "東京",
    "x9",
]
documents = st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=8), max_size=12)


def term_positions(toks: list[Token]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for tok in toks:
        out.setdefault(tok.term, []).append(tok.pos)
    return out


@settings(max_examples=examples(300))
@given(texts)
def test_tokens_lie_in_the_text_and_agree_with_index_terms(text: str) -> None:
    toks = tokens(text)
    last_pos = -1
    for tok in toks:
        assert tok.term and 0 <= tok.start < tok.end <= len(text)
        assert tok.pos >= last_pos
        last_pos = tok.pos
    assert index_terms(text) == (term_positions(toks), len(toks))


@settings(max_examples=examples(200))
@given(st.text(st.sampled_from(INTERESTING), max_size=30))
def test_fold_is_idempotent_and_tokens_are_folded(text: str) -> None:
    assert fold(fold(text)) == fold(text)
    for tok in tokens(text):
        assert fold(tok.term) == tok.term


@settings(max_examples=examples(200))
@given(texts)
def test_parse_query_answers_any_text(text: str) -> None:
    parsed = parse_query(text)
    for term in [*parsed.all_terms(), *([parsed.prefix] if parsed.prefix else [])]:
        assert term and fold(term) == term
    assert parsed.empty == (not parsed.terms and not parsed.phrases and not parsed.prefix)


@settings(max_examples=examples(20))
@given(st.text(chars, min_size=1, max_size=20))
def test_parse_query_refuses_over_the_limit(text: str) -> None:
    long = (text * (MAX_QUERY_CHARS // len(text) + 1))[: MAX_QUERY_CHARS + 1]
    with pytest.raises(ValidationError) as caught:
        parse_query(long)
    assert caught.value.field == "text"


def _index(docs: list[list[str]]) -> tuple[InvertedIndex, dict[str, str]]:
    ix = InvertedIndex()
    texts_by_id = {f"d{i:02d}": " ".join(words) for i, words in enumerate(docs)}
    for doc_id, text in texts_by_id.items():
        ix.add(doc_id, text)
    return ix, texts_by_id


@settings(max_examples=examples(100))
@given(documents, st.data())
def test_search_is_sound_and_complete(docs: list[list[str]], data: st.DataObject) -> None:
    ix, by_id = _index(docs)
    if not docs:
        assert ix.search("recipe") == []
        return
    doc_number = data.draw(st.integers(0, len(docs) - 1))
    doc_id, words = f"d{doc_number:02d}", docs[doc_number]
    word = data.draw(st.sampled_from(words))
    exact = ix.search(word + " ", limit=None)
    assert doc_id in {hit.doc_id for hit in exact}
    wanted = parse_query(word + " ").all_terms()
    for hit in exact:  # sound: every hit holds every term
        held = index_terms(by_id[hit.doc_id])[0]
        assert all(term in held for term in wanted)
    cut = data.draw(st.integers(1, len(word)))
    assert doc_id in {hit.doc_id for hit in ix.search(word[:cut], limit=None)}
    if len(words) > 1:
        i = data.draw(st.integers(0, len(words) - 2))
        phrase = f'"{words[i]} {words[i + 1]}"'
        assert doc_id in {hit.doc_id for hit in ix.search(phrase, limit=None)}


@settings(max_examples=examples(200))
@given(st.text(chars, max_size=400), texts)
def test_snippet_highlights_lie_inside_it(text: str, query: str) -> None:
    result = snippet(text, query)
    units = len(result["snippet"].encode("utf-16-le", "surrogatepass")) // 2
    end = 0
    for a, b in result["highlights"]:
        assert end <= a < b <= units
        end = b


@settings(max_examples=examples(100))
@given(documents, st.lists(st.sampled_from([*WORDS, " ", '"', "pr", "配", "re"]), max_size=8))
def test_counts_with_a_positions_lookup_rank_as_positions_do(
    docs: list[list[str]], parts: list[str]
) -> None:
    # What a stored index keeps ({docId: tf}, positions in the docs records) ranks the same.
    ix, _ = _index(docs)
    parsed = parse_query("".join(parts))
    counts = {term: {doc: len(p) for doc, p in held.items()} for term, held in ix.postings.items()}
    asked: list[tuple[str, str]] = []

    def positions(term: str, doc: str) -> list[int]:
        asked.append((term, doc))
        return ix.postings[term][doc]

    plain = ix.bm25.rank(parsed, ix.postings, ix.lengths, ix.stats, ix.vocabulary, limit=5)
    counted = ix.bm25.rank(
        parsed, counts, ix.lengths, ix.stats, ix.vocabulary, limit=5, positions=positions
    )
    assert counted == plain
    assert all(doc in ix.postings[term] for term, doc in asked)
    if not parsed.phrases:
        assert asked == []


#: Words and separators for the fast paths' cases: ASCII, accents (combining ones
#: too, alone after a space), a Devanagari spacing mark, ligatures, CJK.
PIECES = [*WORDS, "the", "oven", "re", "1½x", "ﬁne", "e\u0301te", "\u0301a", "नमस्ते", "Straße"]
fast_texts = (
    st.lists(
        st.sampled_from(PIECES) | st.sampled_from([" ", ", ", ".\n", "-", "\u0301", "_"]),
        max_size=40,
    ).map("".join)
    | texts
)
fast_queries = st.lists(st.sampled_from([*PIECES, " ", '"', "pr", "su", "e"]), max_size=6).map(
    "".join
)


@settings(max_examples=examples(300))
@given(fast_texts, fast_queries)
def test_held_terms_are_index_terms_kept_to_the_query(text: str, typed: str) -> None:
    query = parse_query(typed)
    wanted, prefix = query.all_terms(), query.prefix
    full, length = index_terms(text)
    held, held_length = held_terms(text, wanted, prefix)

    def kept(terms: dict[str, list[int]]) -> dict[str, list[int]]:
        return {
            t: p
            for t, p in terms.items()
            if t in wanted or (prefix is not None and t.startswith(prefix))
        }

    assert held_length == length
    assert kept(held) == kept(full)


@settings(max_examples=examples(300))
@given(fast_texts, fast_queries)
def test_snippet_matches_are_the_matching_tokens(text: str, typed: str) -> None:
    query = parse_query(typed)
    slow = [(t.term, t.start, t.end) for t in _matches(tokens(text), query)]
    fast = _ascii_matches(text, query) if text.isascii() else _word_matches(text, query)
    if fast is not None:
        assert [(t.term, t.start, t.end) for t in fast] == slow


ASCII_WORDS = ["the", "oven", "re", "x9", "sum", "sumac"]
ascii_texts = st.lists(
    st.sampled_from([*ASCII_WORDS, "The", "OVEN", "a_b"])
    | st.sampled_from([" ", ", ", ".\n", "-", "_", "'", "9", ""]),
    max_size=30,
).map("".join) | st.text(st.characters(max_codepoint=0x7F), max_size=40)
ascii_phrases = st.lists(st.sampled_from(ASCII_WORDS), min_size=2, max_size=3) | st.lists(
    st.sampled_from([*ASCII_WORDS, "é", "配方", "_", "Oven"]), min_size=1, max_size=3
)


@settings(max_examples=examples(500))
@given(ascii_texts, ascii_phrases)
def test_an_ascii_phrase_pattern_matches_exactly_when_the_text_holds_the_phrase(
    text: str, phrase: list[str]
) -> None:
    terms, _ = index_terms(text)
    pattern = ascii_phrase(phrase)
    held = all(t in terms for t in phrase) and has_phrase([terms[t] for t in phrase])
    matched = pattern is not None and pattern.search(text.lower()) is not None
    assert matched == held, (phrase, pattern)


@settings(max_examples=examples(200))
@given(
    st.lists(st.tuples(st.sampled_from(["a", "b", "c", "d"]), fast_texts), max_size=30),
    st.integers(min_value=0, max_value=80),
)
def test_the_terms_memo_gives_index_terms_of_the_text_asked_about(
    calls: list[tuple[str, str]], max_chars: int
) -> None:
    memo = TermsMemo(max_chars=max_chars)
    for doc_id, text in calls:
        terms, length = index_terms(text)
        expected = ({t: tuple(p) for t, p in terms.items()}, length)
        assert memo.terms(doc_id, text) == expected
        assert memo.chars <= max_chars
        assert memo.terms(doc_id, text) == expected  # again: from the entry


def best_window_by_every_window(matches: list[Token], width: int) -> tuple[int, int]:
    """The best window, each one built and counted on its own (what _best_window must give)."""
    best, best_key = (0, 0), (-1, -1)
    for first, tok in enumerate(matches):
        last = first
        while last + 1 < len(matches) and matches[last + 1].end - tok.start <= width:
            last += 1
        window = matches[first : last + 1]
        key = (len({m.term for m in window}), len(window))
        if key > best_key:
            best, best_key = (first, last), key
    return best


@settings(max_examples=examples(300))
@given(
    st.lists(
        st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(0, 12), st.integers(1, 9)),
        max_size=30,
    ),
    st.integers(min_value=1, max_value=40),
)
def test_the_sliding_best_window_is_the_best_of_every_window(
    steps: list[tuple[str, int, int]], width: int
) -> None:
    matches: list[Token] = []
    at = 0
    for term, gap, length in steps:  # in text order, as the snippet's matches come
        at += gap
        matches.append(Token(term, at, at + length, 0))
    assert _best_window(matches, width) == best_window_by_every_window(matches, width)
