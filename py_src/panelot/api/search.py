"""Commands and queries of full-text search (:mod:`panelot.search`).

Queries::

    search.messages {text, limit?: 20 (1..100),
                     filters?: {folder?, tag?, pinned?, archived?: false, from?, to?}}
        -> {hits: [{threadId, nodeId, title, snippet, highlights, onVisibleBranch, ts}],
            total}                                  (best first; nodeId null: the title)
    search.status   {} -> {format, docs, lagging, building}

Command::

    search.rebuild  {} -> {threads, docs}

Every hit is checked against ``panelot_v1`` before it is returned (docs/search.md).
``search.messages`` reads the index database through the idb layer, so as a live query
(``store.live``) it runs again when the indexer commits what it read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from panelot.bus import Call, Env, Handler, Query
from panelot.codec import Raw
from panelot.idb import Transaction
from panelot.idb.errors import ValidationError
from panelot.search.env import indexer_of
from panelot.search.query import Filters, search

__all__ = ["COMMANDS", "QUERIES"]

_FILTERS = frozenset({"folder", "tag", "pinned", "archived", "from", "to"})


def _filters(raw: Any) -> Filters:
    """The filters of ``raw`` (an object of :data:`_FILTERS`), checked."""
    if raw is None:
        return Filters()
    if not isinstance(raw, dict):
        raise ValidationError("filters: must be an object", field="filters")
    unknown = sorted(set(raw) - _FILTERS)
    if unknown:
        raise ValidationError(f"filters: unknown {unknown}", field="filters")
    for key in ("folder", "tag"):
        if raw.get(key) is not None and not isinstance(raw[key], str):
            raise ValidationError(f"filters.{key}: must be a string", field=f"filters.{key}")
    for key in ("pinned", "archived"):
        if raw.get(key) is not None and not isinstance(raw[key], bool):
            raise ValidationError(f"filters.{key}: must be true or false", field=f"filters.{key}")
    for key in ("from", "to"):
        value = raw.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise ValidationError(f"filters.{key}: must be a time in ms", field=f"filters.{key}")
    return Filters(
        folder=raw.get("folder"),
        tag=raw.get("tag"),
        pinned=raw.get("pinned"),
        archived=bool(raw.get("archived", False)),
        start=raw.get("from"),
        end=raw.get("to"),
    )


@dataclass(frozen=True, slots=True)
class MessagesArgs:
    """``search.messages``."""

    text: str
    limit: int = 20
    filters: Raw = None

    def __post_init__(self) -> None:
        if not 1 <= self.limit <= 100:
            raise ValidationError("limit: must be an integer from 1 to 100", field="limit")
        _filters(self.filters)


async def _messages(env: Env, a: MessagesArgs) -> dict[str, Any]:
    indexer = indexer_of(env)
    result, formatted = await search(env.db, indexer.index, a.text, a.limit, _filters(a.filters))
    if not formatted:
        indexer.ensure()  # the index database is gone or new: it rebuilds by itself
    return result


@dataclass(frozen=True, slots=True)
class NoArgs:
    """A query or command that takes nothing."""


async def _status(env: Env, a: NoArgs) -> dict[str, Any]:
    return await indexer_of(env).status()


async def _rebuild_prepare(env: Env, p: NoArgs) -> dict[str, int]:
    """The rebuild itself, outside the receipt's transaction (it reads and writes much)."""
    return await indexer_of(env).rebuild()


async def _rebuild(tx: Transaction, call: Call[NoArgs]) -> dict[str, int]:
    result: dict[str, int] = call.prepared
    return result


COMMANDS: dict[str, Handler[Any]] = {
    "search.rebuild": Handler(
        payload=NoArgs, tables=("threads",), run=_rebuild, prepare=_rebuild_prepare
    ),
}
"""The search commands."""

QUERIES: dict[str, Query[Any]] = {
    "search.messages": Query(args=MessagesArgs, run=_messages),
    "search.status": Query(args=NoArgs, run=_status),
}
"""The search queries."""
