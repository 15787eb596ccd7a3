"""The store's indexer, as handlers and queries reach it: :class:`Searching`."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from panelot.idb.errors import NotFoundError
from panelot.search.indexer import Indexer

__all__ = ["Searching", "indexer_of"]


@runtime_checkable
class Searching(Protocol):
    """An env that owns a search index (the store is one)."""

    @property
    def search(self) -> Indexer | None:
        """The indexer of its index database (``None``: opened without search)."""
        ...


def indexer_of(env: object) -> Indexer:
    """The indexer of ``env``; ``NotFoundError`` when it has none."""
    indexer = env.search if isinstance(env, Searching) else None
    if indexer is None:
        raise NotFoundError("search: this store was opened without a search index")
    return indexer
