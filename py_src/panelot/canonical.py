r"""Canonical JSON (RFC 8785) of any JSON data, lone surrogates included.

RFC 8785 follows ECMAScript's ``JSON.stringify`` for strings, numbers and literals and
sorts object keys by their UTF-16 code units. It refuses strings holding lone
surrogates (U+D800..U+DFFF unpaired), which JavaScript strings, IndexedDB and this
store's free text may hold. :func:`canonical_json` writes such a string as
``JSON.stringify`` has since ES2019: each lone surrogate as a ``\udxxx`` escape
(lowercase hex), everything else exactly as RFC 8785. So the output is always
well-formed UTF-8, never raises for a lone surrogate, and equals the text a
``JSON.stringify``-based canonicalizer builds in a browser. Well-formed input gives
exactly the ``rfc8785`` package's bytes.

Plain data (ASCII keys, strings, booleans, ``None``, safe integers) is written by the C
JSON encoder, whose compact sorted output is RFC 8785's text for it; floats, non-ASCII
keys and other types take the ``rfc8785`` reference encoder, and, when it refuses a
lone surrogate, a walk that writes strings as above and numbers through ``rfc8785``.
"""

from __future__ import annotations

import json
from typing import Any

import rfc8785

from panelot.surrogates import escape_lone_surrogates

__all__ = ["canonical_json"]

_SAFE_INT = 2**53 - 1
_FAST_DEPTH = 64


def canonical_json(value: Any) -> bytes:
    """RFC 8785 canonical JSON (UTF-8) of ``value``, lone surrogates escaped.

    Raises ``rfc8785.CanonicalizationError`` (a ``ValueError``) for data RFC 8785 cannot
    write: NaN, infinities, integers beyond 2**53 - 1, non-string keys, other types;
    ``RecursionError`` for data nested beyond the interpreter's recursion limit.
    """
    if _plain(value, 0):
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        try:
            return text.encode()
        except UnicodeEncodeError:
            return escape_lone_surrogates(text).encode()
    try:
        return bytes(rfc8785.dumps(value))
    except (rfc8785.CanonicalizationError, UnicodeEncodeError):
        # a lone surrogate (or a real fault, which the walk raises again)
        return escape_lone_surrogates(_walk(value)).encode()


def _plain(value: Any, depth: int) -> bool:
    """Whether the C JSON encoder writes ``value`` exactly as RFC 8785 does."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return bool(-_SAFE_INT <= value <= _SAFE_INT)
    if depth > _FAST_DEPTH:
        return False
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str or not key.isascii() or not _plain(item, depth + 1):
                return False
        return True
    if kind is list:
        for item in value:
            if not _plain(item, depth + 1):
                return False
        return True
    return False


def _utf16(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


def _walk(value: Any) -> str:
    """RFC 8785 text of ``value`` with strings left unescaped past JSON's own escapes."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "[" + ",".join(_walk(v) for v in value) + "]"
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise rfc8785.CanonicalizationError("object keys must be strings")
        items = sorted(value.items(), key=lambda kv: _utf16(kv[0]))
        return "{" + ",".join(f"{_walk(k)}:{_walk(v)}" for k, v in items) + "}"
    return bytes(rfc8785.dumps(value)).decode()
