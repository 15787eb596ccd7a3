"""The pure search engine (panelot.search): folding, tokens, queries, BM25, snippets.

A planted corpus in English, Chinese, Japanese and Russian with known answers: every
expected document is in the top 10. Bad input (empty, 10,000 characters, punctuation
only, lone surrogates, regex-looking text) gives a clear answer or a ValidationError
naming ``text``, in bounded time. The engine is pure, so these are plain tests; the
stored index and its API are tested on both cores by the behaviour cases.
"""

from __future__ import annotations

import time
import unicodedata

import pytest

from panelot.idb.errors import ValidationError
from panelot.search.inverted import InvertedIndex
from panelot.search.marks import MARK_RANGES, UNICODE_VERSION
from panelot.search.rank import MAX_EXPANSIONS, Bm25, Stats, has_phrase, snippet
from panelot.search.text import MAX_QUERY_CHARS, ParsedQuery, fold, parse_query, tokens

CORPUS = {
    "en-sumac": "For dinner: the recipe with sumac, lemon and a little olive oil.",
    "en-sumac-long": "Sumac is a spice. " + "It is often used in salads and more. " * 20,
    "en-bread": "Bread recipe: flour, water, salt and yeast. Knead for ten minutes.",
    "en-cafe": "We met at the Café de Flore in Paris, then walked along the river.",
    "en-naive": "A NAÏVE approach to caching will not scale past one server.",
    "en-order": "The lemon was sour but the recipe worked out in the end.",
    "zh-recipe": "这个配方很好，我们明天再做一次。",
    "zh-weather": "今天天气不错，适合出去散步。",
    "zh-spec": "主要规范是中文的，旧版规范是俄文的。",
    "ja-test": "これはテストです。東京の天気は晴れです。",
    "ja-katakana": "コンピューターのメモリが足りません。",
    "ru-hello": "Привет! Как дела? Давай встретимся завтра утром.",
    "ru-recipe": "Рецепт салата: огурцы, помидоры и сметана.",
    "ru-yo": "Ёлка стоит в углу, а на ёлке игрушки.",
    "mixed": "The 配方 for борщ needs beets; see the recipe card.",
}

#: (query, documents that must be in the top 10, documents that must not match at all).
PLANTED: list[tuple[str, set[str], set[str]]] = [
    ("recipe", {"en-sumac", "en-bread", "en-order", "mixed"}, {"en-cafe", "zh-recipe"}),
    ("sumac", {"en-sumac", "en-sumac-long"}, {"en-bread"}),
    ("RECIPE SUMAC", {"en-sumac"}, {"en-bread", "en-sumac-long"}),
    ("sumac recipe", {"en-sumac"}, {"en-bread"}),  # words in any order
    ("reci", {"en-sumac", "en-bread", "en-order", "mixed"}, set()),  # the prefix typed
    ("bread rec", {"en-bread"}, {"en-sumac"}),
    ('"recipe with sumac"', {"en-sumac"}, {"en-order"}),
    ('"sumac with recipe"', set(), {"en-sumac"}),  # a phrase keeps its order
    ('"lemon recipe"', set(), {"en-order", "en-sumac"}),
    ("Café", {"en-cafe"}, set()),
    ("cafe", {"en-cafe"}, set()),
    ("CAFÉ", {"en-cafe"}, set()),
    ("naive", {"en-naive"}, set()),
    ("配方", {"zh-recipe", "mixed"}, {"zh-weather"}),
    ("配", {"zh-recipe", "mixed"}, {"zh-weather"}),  # one character, as typed
    ("好", {"zh-recipe"}, set()),  # a run's last character
    ("配方很好", {"zh-recipe"}, {"mixed"}),  # a run: its bigrams in order
    ("天气", {"zh-weather"}, {"zh-recipe"}),
    ("规范", {"zh-spec"}, set()),
    ("中文 俄文", {"zh-spec"}, set()),
    ("テスト", {"ja-test"}, set()),
    ("東京", {"ja-test"}, set()),
    ("メモリ", {"ja-katakana"}, set()),
    ("привет", {"ru-hello"}, set()),
    ("ПРИВЕТ", {"ru-hello"}, set()),
    ("прив", {"ru-hello"}, set()),
    ("завтра утром", {"ru-hello"}, set()),
    ("«встретимся завтра»", {"ru-hello"}, set()),
    ("рецепт", {"ru-recipe"}, {"en-sumac"}),
    ("елка", {"ru-yo"}, set()),
    ("ЁЛКА", {"ru-yo"}, set()),
    ("борщ", {"mixed"}, set()),
    ("борщ recipe", {"mixed"}, {"ru-recipe"}),
]


@pytest.fixture(scope="module")
def index() -> InvertedIndex:
    ix = InvertedIndex()
    for doc_id, text in CORPUS.items():
        ix.add(doc_id, text)
    return ix


@pytest.mark.parametrize(("query", "expected", "absent"), PLANTED)
def test_planted_answers_are_in_the_top_ten(
    index: InvertedIndex, query: str, expected: set[str], absent: set[str]
) -> None:
    found = [hit.doc_id for hit in index.search(query, limit=None)]
    assert expected <= set(found[:10]), (query, found)
    assert not absent & set(found), (query, found)


def test_the_best_match_ranks_first(index: InvertedIndex) -> None:
    # Two matching words beat one; a short document beats a long one on the same word.
    assert index.search("recipe sumac")[0].doc_id == "en-sumac"
    hits = [hit.doc_id for hit in index.search("sumac")]
    assert hits.index("en-sumac") < hits.index("en-sumac-long")


def test_the_whole_word_ranks_before_its_completions() -> None:
    ix = InvertedIndex()
    ix.add("a", "tea time")
    ix.add("b", "teapot time")
    assert [hit.doc_id for hit in ix.search("tea")] == ["a", "b"]


def test_ties_put_the_greater_id_first() -> None:
    ix = InvertedIndex()
    for doc_id in ("0001", "0003", "0002"):
        ix.add(doc_id, "same words here")
    assert [hit.doc_id for hit in ix.search("words")] == ["0003", "0002", "0001"]


def test_remove_and_replace_keep_the_index_exact() -> None:
    ix = InvertedIndex()
    ix.add("a", "alpha beta")
    ix.add("b", "beta gamma")
    ix.add("a", "delta")  # replaces
    assert [hit.doc_id for hit in ix.search("beta")] == ["b"]
    assert [hit.doc_id for hit in ix.search("delta")] == ["a"]
    ix.remove("b")
    ix.remove("missing")
    assert ix.search("beta") == [] and ix.search("gamma") == []
    assert ix.stats == Stats(docs=1, total_len=1)
    assert "alpha" not in ix.postings and ix.vocabulary == ["delta"]


# --- folding and tokens ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "folded"),
    [
        ("Café", "cafe"),
        ("cafe\u0301", "cafe"),
        ("ПРИВЕТ", "привет"),
        ("Ёлка", "елка"),
        ("Straße", "strasse"),
        ("ﬁne", "fine"),
        ("ＡＢＣ１２３", "abc123"),
        ("ΣΊΣΥΦΟΣ", "σισυφοσ"),
        ("が", "が"),  # the kana voicing mark is not an accent
        ("हिन्दी", "हिन्दी"),  # nor are Devanagari's vowel signs
        ("x\ud800y", "x\ud800y"),
    ],
)
def test_fold(text: str, folded: str) -> None:
    assert fold(text) == folded


def test_the_plain_cjk_characters_fold_to_themselves() -> None:
    # text._CJK_PLAIN lets a run of them skip fold: that must change nothing.
    from panelot.search.text import _CJK_PLAIN

    plain = [chr(c) for c in range(0x3000, 0x32000) if _CJK_PLAIN.fullmatch(chr(c))]
    assert len(plain) > 100_000
    assert [c for c in plain if fold(c) != c] == []
    assert fold("".join(plain[:5000])) == "".join(plain[:5000])  # and runs of them


def test_tokens_keep_offsets_in_the_original_text() -> None:
    text = "Ｃａｆé, ПРИВЕТ!"
    toks = tokens(text)
    assert [t.term for t in toks] == ["cafe", "привет"]
    assert [text[t.start : t.end] for t in toks] == ["Ｃａｆé", "ПРИВЕТ"]
    assert [t.pos for t in toks] == [0, 1]


def test_cjk_runs_become_bigrams_and_the_closing_character() -> None:
    toks = tokens("我爱配方 ok")
    assert [(t.term, t.start, t.end, t.pos) for t in toks] == [
        ("我爱", 0, 2, 0),
        ("爱配", 1, 3, 1),
        ("配方", 2, 4, 2),
        ("方", 3, 4, 2),  # shares the last bigram's position
        ("ok", 5, 7, 3),
    ]
    assert [t.term for t in tokens("字")] == ["字"]


def test_words_split_on_punctuation_and_underscores() -> None:
    assert [t.term for t in tokens("snake_case, e-mail; a.b 42")] == [
        "snake",
        "case",
        "e",
        "mail",
        "a",
        "b",
        "42",
    ]


def test_marks_are_the_running_unicode_marks() -> None:
    if unicodedata.unidata_version != UNICODE_VERSION:
        pytest.skip(f"ranges made from Unicode {UNICODE_VERSION}")
    marks = set()
    for item in MARK_RANGES:
        first, _, last = item.partition("-")
        marks.update(range(int(first, 16), int(last or first, 16) + 1))
    expected = {
        c for c in range(0x300, 0x110000) if unicodedata.category(chr(c)) in ("Mn", "Mc", "Me")
    }
    assert marks == expected


# --- queries ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "terms", "phrases", "prefix"),
    [
        ("recipe sum", ["recipe"], [], "sum"),
        ("recipe sum ", ["recipe", "sum"], [], None),
        ("recipe sum.", ["recipe", "sum"], [], None),
        ('"the recipe" with', [], [["the", "recipe"]], "with"),
        ("“smart quotes” too", [], [["smart", "quotes"]], "too"),
        ('"one"', ["one"], [], None),
        ('"unclosed phrase', [], [["unclosed", "phrase"]], None),
        ('""', [], [], None),
        ("配方", [], [], "配方"),
        ("这个配方", [], [["这个", "个配", "配方"]], None),
        ("tea tea", ["tea"], [], None),
        ("CAFÉ", [], [], "cafe"),
    ],
)
def test_parse_query(
    text: str, terms: list[str], phrases: list[list[str]], prefix: str | None
) -> None:
    assert parse_query(text) == ParsedQuery(terms=terms, phrases=phrases, prefix=prefix)


@pytest.mark.parametrize(
    "text", ["", "   ", "!!!", ".*(", "?.,;:", "^$|[]{}()+*?\\", "\ud800", "\udfff\ud800"]
)
def test_empty_queries_find_nothing(index: InvertedIndex, text: str) -> None:
    assert parse_query(text).empty
    assert index.search(text) == []


def test_regex_looking_text_is_plain_text(index: InvertedIndex) -> None:
    ix = InvertedIndex()
    ix.add("a", "match (a+)* here")
    assert [hit.doc_id for hit in ix.search("(a+)*")] == ["a"]
    assert index.search("recipe.*(") != []  # the words in it still count
    assert parse_query("[^a-z]+$").terms == ["a", "z"]
    assert parse_query("\\d{3}") == ParsedQuery(terms=["d", "3"], prefix=None, phrases=[])


def test_a_lone_surrogate_never_crashes(index: InvertedIndex) -> None:
    text = "recipe\ud800sumac \udc00"
    assert [t.term for t in tokens(text)] == ["recipe", "sumac"]
    assert index.search(text)[0].doc_id == "en-sumac"
    ix = InvertedIndex()
    ix.add("s", "broken \ud83d pair and \udc00 more")
    assert [hit.doc_id for hit in ix.search("pair")] == ["s"]
    assert snippet("broken \ud83d pair", "pair")["highlights"] == [[9, 13]]


def test_a_query_over_the_limit_is_a_validation_error_naming_text() -> None:
    parse_query("a" * MAX_QUERY_CHARS)
    with pytest.raises(ValidationError) as caught:
        parse_query("recipe " * 1_500)
    assert caught.value.field == "text"
    assert "1000" in caught.value.message.replace(",", "")
    with pytest.raises(ValidationError) as not_text:
        parse_query(42)  # type: ignore[arg-type]
    assert not_text.value.field == "text"


def test_long_and_hostile_input_is_answered_quickly(index: InvertedIndex) -> None:
    hostile = [
        "(" * 1_000,
        "a" * 1_000,
        "配" * 1_000,
        " ".join(["recipe"] * 142),
        '"' * 1_000,
        "\ud800" * 1_000,
        "a " * 500,
    ]
    started = time.perf_counter()
    for text in hostile:
        index.search(text)
    long_text = "word " * 2_000  # 10,000 characters: indexed and snippeted
    ix = InvertedIndex()
    ix.add("long", long_text)
    assert ix.search("word")[0].doc_id == "long"
    assert len(snippet(long_text, "word")["snippet"]) <= 170
    assert time.perf_counter() - started < 5.0


# --- ranking pieces --------------------------------------------------------------------


def test_prefix_expansion_is_bounded_and_sorted() -> None:
    vocabulary = sorted([f"a{i:03d}" for i in range(200)] + ["a", "b"])
    expanded = Bm25.expand("a", vocabulary)
    assert len(expanded) == MAX_EXPANSIONS
    assert expanded[0] == "a" and expanded == sorted(expanded)
    assert Bm25.expand("c", vocabulary) == []
    assert Bm25.expand("b", vocabulary) == ["b"]


def test_a_prefix_with_many_completions_still_finds_the_doc() -> None:
    ix = InvertedIndex()
    for i in range(300):
        ix.add(f"d{i:03d}", f"pre{i:03d} filler")
    ix.add("exact", "pre filler")
    assert ix.search("pre")[0].doc_id == "exact"
    assert len(ix.search("pre", limit=None)) <= MAX_EXPANSIONS


def test_has_phrase() -> None:
    assert has_phrase([[0, 5], [6], [7]])
    assert not has_phrase([[0], [2]])
    assert not has_phrase([])
    assert has_phrase([[3]])


def test_bm25_weights() -> None:
    bm25 = Bm25()
    assert bm25.idf(1, 100) > bm25.idf(50, 100) > 0
    assert bm25.idf(100, 100) > 0  # Lucene's idf never goes negative
    assert bm25.weight(2, 10, 1.0, 10.0) > bm25.weight(1, 10, 1.0, 10.0)
    assert bm25.weight(1, 5, 1.0, 10.0) > bm25.weight(1, 50, 1.0, 10.0)
    assert Stats(0, 0).avgdl == 1.0


# --- snippets --------------------------------------------------------------------------


def _marked(result: dict[str, object]) -> list[str]:
    text = result["snippet"]
    assert isinstance(text, str)
    units = text.encode("utf-16-le", "surrogatepass")
    spans = result["highlights"]
    assert isinstance(spans, list)
    return [units[2 * a : 2 * b].decode("utf-16-le", "surrogatepass") for a, b in spans]


def test_snippet_highlights_the_words_around_the_best_window() -> None:
    text = "Hello there. " * 30 + "The recipe with sumac is great. " + "Filler text. " * 30
    result = snippet(text, "recipe suma")
    assert _marked(result) == ["recipe", "sumac"]
    assert result["snippet"].startswith("\u2026") and result["snippet"].endswith("\u2026")
    assert len(result["snippet"]) <= 170


def test_snippet_of_cjk_merges_overlapping_bigrams() -> None:
    assert _marked(snippet("这个配方很好，我们明天再做。", "配方很好")) == ["配方很好"]


def test_snippet_offsets_are_utf16_units() -> None:
    result = snippet("😀 Café 😀 cafe", "cafe")
    assert _marked(result) == ["Café", "cafe"]
    assert result["highlights"] == [[3, 7], [11, 15]]


def test_snippet_without_a_match_is_the_start_of_the_text() -> None:
    assert snippet("short text", "absent") == {"snippet": "short text", "highlights": []}
    long = snippet("word " * 100, "absent")
    assert long["snippet"].endswith("\u2026") and long["highlights"] == []
    assert snippet("", "x") == {"snippet": "", "highlights": []}


def test_snippet_turns_line_breaks_into_spaces() -> None:
    result = snippet("first line\nsecond line", "second")
    assert result["snippet"] == "first line second line"
    assert _marked(result) == ["second"]


def test_rank_scores_are_the_bm25_sum() -> None:
    ix = InvertedIndex()
    ix.add("a", "alpha beta beta gamma")
    ix.add("b", "alpha beta delta delta delta delta")
    ix.add("c", "alpha")
    bm25, stats = ix.bm25, ix.stats
    ranked = ix.ranked("alpha beta ", limit=None)
    assert ranked.total == 2
    for hit in ranked.hits:
        expected = sum(
            bm25.weight(
                len(ix.postings[term][hit.doc_id]),
                ix.lengths[hit.doc_id],
                bm25.idf(len(ix.postings[term]), stats.docs),
                stats.avgdl,
            )
            for term in ("alpha", "beta")
        )
        assert hit.score == pytest.approx(expected)
    assert ix.ranked("alpha", limit=1).total == 3 and len(ix.ranked("alpha", limit=1).hits) == 1


def test_the_engine_is_pure() -> None:
    # The standard library, its own modules and the store's ValidationError: nothing else.
    import ast
    import sys
    from pathlib import Path

    package = Path(__file__).resolve().parents[1] / "py_src" / "panelot" / "search"
    for module in ("text", "rank", "snippet", "inverted", "marks"):
        tree = ast.parse((package / f"{module}.py").read_text())
        for node in ast.walk(tree):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            for name in names:
                root = name.split(".")[0]
                allowed = (
                    root in sys.stdlib_module_names
                    or name.startswith("panelot.search.")
                    or name == "panelot.idb.errors"
                )
                assert allowed, f"panelot.search.{module} imports {name}"
