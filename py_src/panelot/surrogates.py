"""Lone surrogates: JS strings may hold them; UTF-8 encoders cannot.

A lone surrogate is a UTF-16 code unit U+D800..U+DFFF without its partner. JavaScript
strings and IndexedDB keep them, and so does a Python ``str``; but ``str.encode()``,
``uuid5``, ``hashlib`` input, file names and RFC 8785 refuse them, ``TextEncoder``
and ``chrome.storage.local`` replace each with U+FFFD. The store's rule:

* identifiers (ids, keys, references, client and submission ids, names that become
  storage keys, file names or ``uuid5`` input) must be :func:`well_formed`; a
  ValidationError names the field otherwise (:func:`check_well_formed`);
* free text (message text, titles, tags, folder names) is stored as given; where it
  is hashed or canonicalized it is encoded deterministically
  (:mod:`panelot.canonical`), where it is measured :func:`utf8_size` counts each lone
  surrogate as the three bytes of the U+FFFD a browser would write;
* values bound for ``chrome.storage.local`` (settings, secrets) must be well formed
  (:func:`check_well_formed_data`): it would silently store U+FFFD instead.
"""

from __future__ import annotations

import re
from typing import Any

from panelot.idb.errors import ValidationError

__all__ = [
    "check_well_formed",
    "check_well_formed_data",
    "escape_lone_surrogates",
    "first_lone_surrogate",
    "join_pairs",
    "replace_lone_surrogates",
    "utf8_size",
    "well_formed",
]

_SURROGATE = re.compile("[\ud800-\udfff]")


def well_formed(text: str) -> bool:
    """Whether ``text`` holds no surrogate code point, so every UTF-8 encoder takes it."""
    return text.isascii() or _SURROGATE.search(text) is None


def check_well_formed(value: str, name: str) -> str:
    """Return ``value`` if it is :func:`well_formed`; else a ValidationError naming ``name``."""
    if not well_formed(value):
        raise ValidationError(
            f"{name}: must not contain lone surrogates (U+D800..U+DFFF)", field=name
        )
    return value


def join_pairs(text: str) -> str:
    """``text`` as JavaScript sees it: a high and a low surrogate code point as one pair.

    A Python string may hold the two halves of a pair as two code points, which a JS
    string holds as one astral character; lone surrogates are kept.
    """
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def escape_lone_surrogates(json_text: str) -> str:
    r"""JSON text with every lone surrogate written as ``\udxxx``, as ``JSON.stringify`` does.

    ``json_text`` must be JSON whose strings were written unescaped (``ensure_ascii=False``):
    a surrogate then only occurs inside a string literal, where the escape means the same.
    """
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", join_pairs(json_text))


def replace_lone_surrogates(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD, as ``TextEncoder`` does."""
    if well_formed(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def utf8_size(text: str) -> int:
    """Bytes of ``text`` in UTF-8 as ``TextEncoder`` writes it (U+FFFD for a lone surrogate)."""
    if well_formed(text):
        return len(text.encode())
    return len(replace_lone_surrogates(text).encode())


def first_lone_surrogate(value: Any, path: str) -> str | None:
    """The path of a string (or object key) in ``value`` that is not well formed, or None.

    Paths are written as the wire's validation errors write them (``a.b[2].c``); the walk
    is iterative, so nesting depth does not matter.
    """
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            if not well_formed(item):
                return where
        elif isinstance(item, dict):
            for key, child in reversed(list(item.items())):
                if isinstance(key, str) and not well_formed(key):
                    return f"{where}.{key}"
                stack.append((child, f"{where}.{key}"))
        elif isinstance(item, list | tuple):
            stack.extend((child, f"{where}[{i}]") for i, child in reversed(list(enumerate(item))))
    return None


def check_well_formed_data(value: Any, path: str) -> Any:
    """Return ``value`` if no string in it holds a lone surrogate; else a ValidationError.

    The error names such a string's path (see :func:`first_lone_surrogate`).
    """
    where = first_lone_surrogate(value, path)
    if where is not None:
        raise ValidationError(
            f"{where}: must not contain lone surrogates (U+D800..U+DFFF)", field=where
        )
    return value
