"""Shared ground of the library repositories: skills, memories and plugins.

The repositories live in :mod:`panelot.library.skills`, :mod:`panelot.library.memories`,
:mod:`.plugins` and :mod:`.plugin_assets`; their commands and queries in
:mod:`panelot.api.library`. Every repository function takes a *target*: either a
:class:`~panelot.idb.Database`, in which case the function runs in a transaction of
its own, or a running :class:`~panelot.idb.Transaction` (a command handler's), in
which case it works inside that transaction and awaits nothing else.

Booleans as 1/0: IndexedDB cannot index booleans (a record whose index key is
``true`` or ``false`` is simply left out of that index), so a boolean ``enabled``
would make the declared ``enabled`` indexes of ``skills`` and ``plugins`` inert. The
stored records therefore hold ``enabled`` as the number ``1`` or ``0``, and
``where("enabled").equals(1)`` finds the enabled ones. The Python API and the wire
use ``bool``; :func:`flag_from_db` also reads a boolean written by other code (such a
record is read correctly, it is only missing from the index).

Limits (checked before anything is written; a :class:`ValidationError` names the
field): see the ``MAX_*`` constants here and in the repository modules.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from panelot.codec import MAX_ID_CHARS, plain_json
from panelot.idb import Database, Transaction
from panelot.idb.core import Mode
from panelot.idb.errors import ValidationError
from panelot.surrogates import utf8_size

__all__ = [
    "MAX_ID_CHARS",
    "Target",
    "check_id",
    "check_json",
    "check_limit",
    "check_text",
    "flag_from_db",
    "flag_to_db",
    "json_size",
    "within",
]

T = TypeVar("T")

Target = Database | Transaction
"""Where a repository function runs: its own transaction, or a running one."""


async def within(
    target: Target, mode: Mode, tables: Sequence[str], body: Callable[[Transaction], Awaitable[T]]
) -> T:
    """Run ``body`` in the running transaction ``target``, or in a new one over ``tables``."""
    if isinstance(target, Transaction):
        return await body(target)
    return await target.transaction(mode, list(tables), body)


def flag_to_db(value: bool) -> int:
    """The stored form of a boolean flag: ``1`` or ``0`` (indexable, unlike booleans)."""
    return 1 if value else 0


def flag_from_db(value: Any) -> bool:
    """Read a stored flag: ``1`` (or a boolean ``True`` written by other code) is true."""
    return value is True or (isinstance(value, int | float) and value == 1)


def _fail(path: str, message: str) -> ValidationError:
    return ValidationError(f"{path}: {message}", field=path)


def check_text(value: Any, path: str, max_chars: int, *, min_chars: int = 1) -> str:
    """Return ``value`` if it is a string of ``min_chars`` to ``max_chars`` characters."""
    if not isinstance(value, str):
        raise _fail(path, f"must be a string, got {type(value).__name__}")
    if not min_chars <= len(value) <= max_chars:
        raise _fail(path, f"must have {min_chars} to {max_chars} characters, has {len(value)}")
    return value


def check_id(value: Any, path: str) -> str:
    """Return ``value`` if it is a usable id: 1 to MAX_ID_CHARS characters, no control ones.

    Category ``C`` holds the surrogates too, so an id never holds a lone surrogate.
    """
    text = check_text(value, path, MAX_ID_CHARS)
    if any(unicodedata.category(c).startswith("C") for c in text):
        raise _fail(path, "must not contain control or unassigned characters")
    return text


def json_size(value: Any) -> int:
    """Size in bytes of the compact UTF-8 JSON encoding of ``value``.

    A lone surrogate in a string counts as the 3 bytes of the U+FFFD a browser's UTF-8
    encoder writes for it (``utf8_size``), so free text holding one is measured, not
    refused.
    """
    return utf8_size(json.dumps(value, separators=(",", ":"), ensure_ascii=False))


def check_json(value: Any, path: str, max_bytes: int) -> Any:
    """Return a copy of plain JSON ``value`` whose compact encoding is at most ``max_bytes``."""
    data = plain_json(value, path)
    size = json_size(data)
    if size > max_bytes:
        raise _fail(path, f"is {size} bytes of JSON, more than the limit of {max_bytes}")
    return data


def check_limit(value: Any, path: str, default: int, maximum: int) -> int:
    """Return a list limit: ``default`` when absent, else an integer from 0 to ``maximum``."""
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= maximum:
        raise _fail(path, f"must be an integer from 0 to {maximum}")
    return value
