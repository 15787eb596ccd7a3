"""A value per connection, kept true by the connection's change feed.

Several sections keep a memo per open database (the thread cache, search's decoded
blocks and branches): made on first use, gone with the connection, and dropped in part
when the feed names a change to what it holds. This module holds the two pieces they
share:

* :class:`FeedMemo`, the base of such a memo. It listens to the connection's feed from
  the start, holds the connection weakly (the memo must not keep it alive), and
  :meth:`FeedMemo.live` says whether it may serve: only while the connection is open
  and announces every commit (``observe`` on). A memo that stops being live is cleared,
  so it never answers from before a change it could not hear.
* :class:`PerConnection`, the registry: one value per connection object, made on first
  use, forgotten when the connection is collected.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, TypeVar
from weakref import WeakKeyDictionary, ref

from panelot.idb.observe.changes import ObsSet

if TYPE_CHECKING:
    from panelot.idb.database import Database

V = TypeVar("V")


class FeedMemo(ABC):
    """The base of a memo one connection keeps true through its change feed."""

    def __init__(self, db: Database) -> None:
        self._db = ref(db)  # weak: a registry of memos must not keep a connection alive
        self._feed = db.feed
        self._feed.subscribe(self._changed)  # until the connection closes its feed

    @abstractmethod
    def _changed(self, changes: ObsSet) -> None:
        """Drop what ``changes`` may have made stale."""

    @abstractmethod
    def clear(self) -> None:
        """Drop everything held."""

    def live(self) -> bool:
        """Whether it may serve: the connection is open and announces its commits.

        When it may not, everything held is dropped first.
        """
        db = self._db()
        if db is not None and db.observe and self._feed.has(self._changed):
            return True
        self.clear()
        return False


class PerConnection(Generic[V]):
    """One value per connection object, made by ``make`` on first use.

    A value goes with its connection: two stores in one process (two databases, tests)
    never share one.
    """

    def __init__(self, make: Callable[[Database], V]) -> None:
        self._make = make
        self._values: WeakKeyDictionary[Database, V] = WeakKeyDictionary()

    def __call__(self, db: Database) -> V:
        """The value of ``db`` (made now if it has none)."""
        value = self._values.get(db)
        if value is None:
            value = self._values[db] = self._make(db)
        return value
