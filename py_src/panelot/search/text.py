"""From text to terms: folding, tokens with their offsets, and the parsed query.

Pure and synchronous: the standard library only (``re``, ``unicodedata``), so it runs the
same on CPython and under Pyodide and is imported before the start-up snapshot.

* :func:`fold` makes a term comparable: NFKC, ``casefold``, then the diacritics dropped
  (NFKD, the combining diacritical marks removed, NFC): ``Café`` and ``CAFE`` both fold
  to ``cafe``, ``ПРИВЕТ`` to ``привет``, ``ё`` to ``е``. Only the *diacritic* blocks are
  dropped, so the kana voicing marks and the vowel signs of Indic scripts stay.
* :func:`tokens` splits a text into :class:`Token` s with offsets in the original text:
  words are runs of letters and digits (with the marks inside them); a run of Han,
  Hiragana, Katakana or Hangul, written without spaces, becomes overlapping character
  bigrams, plus its last character alone (sharing the last bigram's position), so one
  typed character finds every place it stands.
* :func:`parse_query` turns what the user typed into a :class:`ParsedQuery`: bare terms,
  quoted phrases, and the last word as a prefix while it is being typed.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import chain, compress
from operator import add
from typing import NamedTuple

from panelot.idb.errors import ValidationError
from panelot.search.marks import mark_class

__all__ = [
    "MAX_QUERY_CHARS",
    "ParsedQuery",
    "Token",
    "ascii_phrase",
    "fold",
    "held_terms",
    "index_terms",
    "kept_words",
    "parse_query",
    "tokens",
]

#: The longest query text accepted; a longer one is a ValidationError naming ``text``.
MAX_QUERY_CHARS = 1_000

#: Scripts written without spaces between words (Han with its iteration marks, the
#: radicals and the compatibility ideographs; Hiragana and Katakana with the voicing
#: marks, the prolonged sound mark and the half-width forms; Hangul syllables and jamo).
_CJK_RANGES: tuple[tuple[int, int], ...] = (
    (0x1100, 0x11FF),
    (0x2E80, 0x2FDF),
    (0x3005, 0x3007),
    (0x3021, 0x302F),
    (0x3038, 0x303C),
    (0x3040, 0x30FF),
    (0x3130, 0x318F),
    (0x31F0, 0x31FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xA960, 0xA97F),
    (0xAC00, 0xD7AF),
    (0xD7B0, 0xD7FF),
    (0xF900, 0xFAFF),
    (0xFF66, 0xFF9F),
    (0xFFA0, 0xFFDC),
    (0x20000, 0x3FFFF),
)
_CJK = "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in _CJK_RANGES)
_MARKS = mark_class(exclude=_CJK_RANGES)
#: CJK characters that fold to themselves (kana without the spacing voicing marks and
#: digraphs, the unified ideographs, the Hangul syllables): a run of them skips fold.
_CJK_PLAIN = re.compile(
    "[\u3041-\u3096\u3099\u309a\u309d\u309e\u30a0-\u30fe\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7a3\U00020000-\U0002ebef\U00030000-\U0003134f]+"
)
#: One token run: a CJK run, or a word (letters and digits, marks inside it). ``\w``
#: less ``_`` less the CJK ranges is "a letter or digit of any other script".
_RUNS = re.compile(f"(?P<cjk>[{_CJK}]+)|(?P<word>[^\\W_{_CJK}]+(?:[{_MARKS}]+[^\\W_{_CJK}]*)*)")
#: One word run of a text without CJK characters (``_RUNS``'s ``word`` group).
_WORDS = re.compile(f"[^\\W_{_CJK}]+(?:[{_MARKS}]+[^\\W_{_CJK}]*)*")
#: A word run of a text with no CJK character and no mark outside a word run.
_PLAIN_WORDS = re.compile(r"[^\W_]+")
#: A non-ASCII character outside ``\\w`` (a mark, if any, is one of them).
_ODD = re.compile(r"[^\w\x00-\x7f]")
#: A mark (``_RUNS`` keeps one following a word in the word).
_MARK = re.compile(f"[{_MARKS}]")
#: Any CJK character.
_CJK_ANY = re.compile(f"[{_CJK}]")
#: A word of lower-cased ASCII text (``\\w`` less ``_``).
_ASCII_WORD = re.compile("[a-z0-9]+")
#: Letters and digits of the folded text (folding may bring punctuation in: ``½``).
_PIECES = re.compile(f"[^\\W_]+(?:[{_MARKS}]+[^\\W_]*)*")
#: The combining diacritical marks :func:`fold` drops (Latin, Greek, Cyrillic accents).
_DIACRITICS = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
#: Opening quote -> its closing quote (ASCII, typographic, guillemets, CJK brackets).
_QUOTES = {'"': '"', "\u201c": "\u201d", "\u201e": "\u201c", "\u00ab": "\u00bb", "\u300c": "\u300d"}


class Token(NamedTuple):
    """One term of a text: ``start``/``end`` in the original text, ``pos`` its position.

    Positions count words and bigrams one by one; the last character of a CJK run, added
    alone, shares the position of the run's last bigram (it is an alternative, not a
    next word), so phrases keep counting across it.
    """

    term: str
    start: int
    end: int
    pos: int


@dataclass(frozen=True)
class ParsedQuery:
    """What a query asks for; every term is folded as :func:`tokens` folds the index.

    ``terms``: the exact terms that must all occur; ``phrases``: term sequences that must
    occur in that order at consecutive positions (a quoted phrase, or a CJK run of three
    or more characters, whose bigrams must follow each other); ``prefix``: the last bare
    word when the text does not end in a space or punctuation (search as you type); it is
    not in ``terms``.
    """

    terms: list[str] = field(default_factory=list)
    phrases: list[list[str]] = field(default_factory=list)
    prefix: str | None = None

    @property
    def empty(self) -> bool:
        """Whether the query asks for nothing (empty, spaces or punctuation only)."""
        return not self.terms and not self.phrases and not self.prefix

    def all_terms(self) -> list[str]:
        """The exact terms and the phrases' terms, each once, in order (not the prefix)."""
        seen: dict[str, None] = dict.fromkeys(self.terms)
        for phrase in self.phrases:
            seen.update(dict.fromkeys(phrase))
        return list(seen)


def fold(text: str) -> str:
    """NFKC, ``casefold``, then the diacritics dropped (NFKD, marks removed, NFC)."""
    if text.isascii():
        return text.lower()
    folded = unicodedata.normalize("NFKC", text).casefold()
    decomposed = unicodedata.normalize("NFKD", folded)
    stripped = _DIACRITICS.sub("", decomposed)
    return unicodedata.normalize("NFC", stripped)


@lru_cache(maxsize=65_536)
def _fold_word(word: str) -> tuple[str, ...]:
    """A word's folded pieces (usually one; none when it folds to no letter or digit)."""
    folded = fold(word)
    if _PIECES.fullmatch(folded):
        return (folded,)
    return tuple(_PIECES.findall(folded))


def _cjk_chars(run: str) -> Sequence[str]:
    """The folded characters of a CJK run, one a character of the original run."""
    if _CJK_PLAIN.fullmatch(run):
        return run
    folded = fold(run)
    if len(folded) == len(run):
        return folded
    return [fold(char) or char for char in run]


def _bigrams(chars: Sequence[str]) -> list[str]:
    """The overlapping pairs of a run's characters (at least two of them)."""
    return list(map(add, chars[:-1], chars[1:]))


def tokens(text: str) -> list[Token]:
    """Split ``text`` into folded terms with their offsets in ``text`` and positions.

    Never raises on any ``str``: lone surrogates, controls and unassigned code points
    are not letters, so they only separate words.
    """
    out: list[Token] = []
    append = out.append
    pos = 0
    if text.isascii():
        # ASCII folds to lower case, length for length: one regex pass over it.
        for match in _RUNS.finditer(text.lower()):
            append(Token(match.group(), match.start(), match.end(), pos))
            pos += 1
        return out
    for match in _RUNS.finditer(text):
        start, end = match.span()
        if match.lastgroup == "word":
            for piece in _fold_word(match.group()):
                append(Token(piece, start, end, pos))
                pos += 1
            continue
        chars = _cjk_chars(match.group())
        if len(chars) == 1:
            append(Token(chars[0], start, end, pos))
            pos += 1
            continue
        for i in range(len(chars) - 1):
            append(Token(chars[i] + chars[i + 1], start + i, start + i + 2, pos))
            pos += 1
        append(Token(chars[-1], end - 1, end, pos - 1))
    return out


def index_terms(text: str) -> tuple[dict[str, list[int]], int]:
    """``({term: [positions]}, length)`` of ``text``: what an index keeps of a document.

    The same terms and positions as :func:`tokens` (``length`` is its token count), with
    no offsets and no :class:`Token` built: the fast path for indexing.
    """
    out: dict[str, list[int]] = {}
    get = out.get
    if text.isascii():
        words = _ASCII_WORD.findall(text.lower())
        for pos, term in enumerate(words):
            held = get(term)
            if held is None:
                out[term] = [pos]
            else:
                held.append(pos)
        return out, len(words)
    pos = 0
    length = 0
    for cjk, word in _RUNS.findall(text):
        closing: str | None = None
        terms: Sequence[str]
        if word:
            terms = _fold_word(word)
        else:
            chars = _cjk_chars(cjk)
            if len(chars) == 1:
                terms = chars
            else:
                terms = _bigrams(chars)
                closing = chars[-1]
        for term in terms:
            held = get(term)
            if held is None:
                out[term] = [pos]
            else:
                held.append(pos)
            pos += 1
        length += len(terms)
        if closing is not None:  # the run's last character, at its last bigram's position
            held = get(closing)
            if held is None:
                out[closing] = [pos - 1]
            else:
                held.append(pos - 1)
            length += 1
    return out, length


def held_terms(
    text: str, wanted: Collection[str], prefix: str | None
) -> tuple[dict[str, list[int]], int]:
    """:func:`index_terms` of ``text`` kept to ``wanted`` and the terms ``prefix`` starts.

    The same positions and the same ``length``; a text without CJK characters is split
    in one regex pass, its words folded through the folding cache, and only the kept
    terms' positions are gathered (in C loops): the fast path for a query checking its
    candidates. A text with CJK characters gets all of :func:`index_terms`.
    """
    words: list[str]
    if text.isascii():
        words = _ASCII_WORD.findall(text.lower())
    elif _CJK_ANY.search(text) is None:
        runs = _word_runs(text).findall(text)
        words = list(chain.from_iterable(map(_fold_word, runs)))
    else:
        return index_terms(text)
    keep = {
        term
        for term in set(words)
        if term in wanted or (prefix is not None and term.startswith(prefix))
    }
    out: dict[str, list[int]] = {}
    if keep:
        for pos in compress(range(len(words)), map(keep.__contains__, words)):
            out.setdefault(words[pos], []).append(pos)
    return out, len(words)


def ascii_phrase(phrase: Sequence[str]) -> re.Pattern[str] | None:
    """A pattern found in an ASCII text, lower-cased, exactly when it holds ``phrase``.

    An ASCII text's terms are its lower-cased ``[a-z0-9]+`` runs, one position each, so
    terms at consecutive positions are runs with only other characters between them: a
    query can reject a candidate with one regex search, before splitting its text.
    ``None`` when a term of ``phrase`` is not such a run (no ASCII text holds it).
    """
    if not phrase or not all(_ASCII_WORD.fullmatch(term) for term in phrase):
        return None
    body = "[^a-z0-9]+".join(map(re.escape, phrase))
    return re.compile(f"(?<![a-z0-9]){body}(?![a-z0-9])")


def _word_runs(text: str) -> re.Pattern[str]:
    r"""The pattern that splits ``text`` (no CJK in it) into ``_RUNS``'s word runs.

    ``_WORDS`` itself when a mark stands outside a word run (it joins it to the word
    before); else the plain ``[^\W_]+``, which gives the same runs and runs faster.
    """
    return _WORDS if _MARK.search("".join(_ODD.findall(text))) else _PLAIN_WORDS


def kept_words(
    text: str, wanted: Collection[str], prefix: str | None
) -> list[tuple[str, int, int]] | None:
    """The terms of a text without CJK characters in ``wanted`` or starting with ``prefix``.

    ``(term, start, end)`` with its word's span, in text order, a word's pieces in their
    order: those of :func:`tokens`' terms, with their offsets; ``None`` for a text with a
    CJK character (split it with :func:`tokens`). The distinct words are folded (through
    the cache) and only the words holding a kept term are found again, by one regex of
    them as whole word runs: no match object for the other words.
    """
    if _CJK_ANY.search(text) is not None:
        return None

    def keep(term: str) -> bool:
        return term in wanted or (prefix is not None and term.startswith(prefix))

    runs = _word_runs(text)
    if runs is not _PLAIN_WORDS:  # a mark outside a word run: the words are _WORDS' runs
        return [
            (term, match.start(), match.end())
            for match in runs.finditer(text)
            for term in _fold_word(match.group())
            if keep(term)
        ]
    distinct = list(set(runs.findall(text)))
    folded = map(_fold_word, distinct)
    kept: dict[str, list[str]]
    if prefix is None:  # a word is kept when one of its pieces is wanted: C loops
        terms = set(wanted)
        kept = {
            word: [t for t in pieces if t in terms]
            for word, pieces in zip(distinct, folded, strict=True)
            if not terms.isdisjoint(pieces)
        }
    else:
        kept = {}
        for word, pieces in zip(distinct, folded, strict=True):
            held = [term for term in pieces if keep(term)]
            if held:
                kept[word] = held
    if not kept:
        return []
    either = "|".join(map(re.escape, sorted(kept)))
    found = re.finditer(f"(?<![^\\W_])(?:{either})(?![^\\W_])", text)
    return [(term, match.start(), match.end()) for match in found for term in kept[match.group()]]


def _segments(text: str) -> list[tuple[str, bool]]:
    """``text`` cut into ``(part, quoted)`` pieces; an unclosed quote runs to the end."""
    out: list[tuple[str, bool]] = []
    i = 0
    bare_from = 0
    while i < len(text):
        closing = _QUOTES.get(text[i])
        if closing is None:
            i += 1
            continue
        out.append((text[bare_from:i], False))
        end = text.find(closing, i + 1)
        if end < 0:
            out.append((text[i + 1 :], True))
            return out
        out.append((text[i + 1 : end], True))
        i = bare_from = end + 1
    out.append((text[bare_from:], False))
    return out


def _groups(toks: list[Token]) -> list[list[Token]]:
    """Tokens grouped by run (the bigrams of a CJK run overlap).

    A run's closing character alone (same position as the bigram before it) is left
    out: the bigrams cover it.
    """
    groups: list[list[Token]] = []
    for tok in toks:
        if groups and tok.pos == groups[-1][-1].pos:
            continue  # a CJK run's closing character: an alternative, not a new term
        if groups and tok.start < groups[-1][-1].end:
            groups[-1].append(tok)
        else:
            groups.append([tok])
    return groups


def parse_query(text: str) -> ParsedQuery:
    """Parse what the user typed into terms, phrases and the prefix being typed.

    Raises:
        ValidationError: ``text`` is not a string, or longer than MAX_QUERY_CHARS.
    """
    if not isinstance(text, str):
        raise ValidationError("text must be a string", field="text")
    if len(text) > MAX_QUERY_CHARS:
        raise ValidationError(
            f"text is {len(text)} characters, at most {MAX_QUERY_CHARS} are searched",
            field="text",
        )
    terms: dict[str, None] = {}
    phrases: list[list[str]] = []
    prefix: str | None = None
    segments = _segments(text)
    for index, (part, quoted) in enumerate(segments):
        groups = _groups(tokens(part))
        if quoted:
            words = [tok.term for group in groups for tok in group]
            if len(words) == 1:
                terms[words[0]] = None
            elif words and words not in phrases:
                phrases.append(words)
            continue
        last_segment = index == len(segments) - 1
        for number, group in enumerate(groups):
            if len(group) > 1:
                run = [tok.term for tok in group]
                if run not in phrases:
                    phrases.append(run)
                continue
            tok = group[0]
            typing = last_segment and number == len(groups) - 1 and tok.end == len(part)
            if typing:
                prefix = tok.term
            else:
                terms[tok.term] = None
    if prefix is not None and prefix in terms:
        prefix = None  # already asked for whole: "tea tea" is "tea"
    return ParsedQuery(terms=list(terms), phrases=phrases, prefix=prefix)
