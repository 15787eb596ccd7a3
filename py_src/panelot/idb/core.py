"""The low-level, bulk-oriented core protocol (in the spirit of Dexie's DBCore).

A transaction body is a coroutine. Each operation it awaits is a plain-data
:class:`Request`; awaiting one *yields* it to the transaction driver
(:mod:`panelot.idb.driver`) instead of to the asyncio event loop. The driver hands it
to a core, and resumes the body with the result as soon as the core has it: the
memory core at once, the browser core from inside the IndexedDB success callback, so
the native transaction never sees an idle turn of the event loop and stays alive.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Generator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, TypeVar

from panelot.idb.errors import PanelotError
from panelot.idb.files import ByteSource, FileParts
from panelot.idb.keys import Key, KeyRange
from panelot.idb.schema import SchemaVersion, TableSpec
from panelot.idb.upgrade import SchemaDiff

if TYPE_CHECKING:
    from panelot.idb.observe.feed import ChangeFeed, Channel

__all__ = [
    "Batch",
    "Blobs",
    "DURABILITIES",
    "Count",
    "Core",
    "CoreFactory",
    "Durability",
    "GetMany",
    "Mode",
    "Mutate",
    "MutateResult",
    "Query",
    "Request",
    "TransactionBody",
    "describe_tables",
]

T = TypeVar("T")
Mode: TypeAlias = Literal["r", "rw"]
"""A transaction mode: ``"r"`` (readonly) or ``"rw"`` (readwrite), as in Dexie."""

Durability: TypeAlias = Literal["default", "strict", "relaxed"]
"""When IndexedDB may report a read-write transaction committed (``IDBTransaction.durability``).

``"strict"``: only once the data is flushed to disk; ``"relaxed"``: once the write is
in the operating system's hands; ``"default"``: the browser's choice (relaxed in Chrome
since version 121). Dexie's ``chromeTransactionDurability``."""

DURABILITIES: tuple[Durability, ...] = ("default", "strict", "relaxed")
"""Every :data:`Durability`."""

QueryWant: TypeAlias = Literal["values", "primaryKeys", "records", "entries"]


class Request:
    """Base of every core request. ``await request`` yields it to the driver."""

    __slots__ = ()

    def __await__(self) -> Generator[Request, Any, Any]:
        """Yield this request to the transaction driver and return its result."""
        return (yield self)


@dataclass(slots=True)
class GetMany(Request):
    """Read the records under each primary key; missing ones come back as ``None``."""

    table: str
    keys: list[Key]


@dataclass(slots=True)
class MutateResult:
    """The outcome of a :class:`Mutate`: the primary key of each value, failures by position."""

    keys: list[Key]
    failures: dict[int, PanelotError] = field(default_factory=dict)


@dataclass(slots=True)
class Mutate(Request):
    """Write several values, or delete several keys or one key range, issued together.

    ``kind`` is ``add``, ``put``, ``delete`` (``keys``) or ``deleteRange`` (``range``).
    ``values`` are what the core's :meth:`Core.snapshot` made of the caller's values;
    ``keys`` are explicit out-of-line keys (or ``None`` entries for generated ones), and
    ``resolved`` the primary key each value carries in-line (``None`` for a key the store
    generates), found when the write was prepared. Failures of single items are reported
    by position in the :class:`MutateResult`; they do not abort the transaction by
    themselves.
    """

    table: str
    kind: Literal["add", "put", "delete", "deleteRange"]
    values: Sequence[Any] | None = None
    keys: list[Key | None] | None = None
    range: KeyRange | None = None
    resolved: list[Key | None] | None = None
    index_keys: dict[str, list[Key]] | None = None
    """For an ``add``/``put`` of few values: the keys they give each index, by index
    name, found when the write was prepared (what the change feed announces; ``None``
    announces every key of every index)."""
    source: Sequence[Any] | None = None
    """For an ``add``/``put``: the caller's values the snapshot was made of (what a
    middleware that changes values, such as the hooks, works on)."""


@dataclass(slots=True)
class Query(Request):
    """Read in key order from the primary key (``index=None``) or a secondary index.

    ``want`` is ``values``, ``primaryKeys``, ``records`` (a list of
    ``(index key, primary key, value)`` triples) or ``entries`` (``(index key, primary
    key)`` pairs: a cursor's walk over an index without the values crossing into
    Python). ``limit`` of ``None`` means no limit.
    ``fields`` keeps only those fields of each value (top-level names or dotted key
    paths, nested as they were; absent ones stay absent),
    chosen before the values cross into Python: a cheap read of a few fields of records
    that also hold Blobs or large payloads. With ``omit`` it keeps every field *but*
    those (a record's metadata without its Blob).
    """

    table: str
    index: str | None
    range: KeyRange
    want: QueryWant = "values"
    reverse: bool = False
    limit: int | None = None
    fields: tuple[str, ...] | None = None
    omit: bool = False


@dataclass(slots=True)
class Count(Request):
    """Count the records (index entries for an index) within a key range."""

    table: str
    index: str | None
    range: KeyRange


@dataclass(slots=True)
class Batch(Request):
    """Several requests issued at once; the result is the list of their results.

    The requests may be reads and writes of any tables of the transaction (not other
    batches); IndexedDB runs them in order. Normally the first failure is raised; with
    ``settled`` each failed request's error takes its place in the result list instead.
    """

    requests: Sequence[Request]
    settled: bool = False


TransactionBody: TypeAlias = Callable[[Any], Coroutine[Any, Any, T]]
"""An ``async def body(tx)``: the coroutine that runs inside one transaction."""


class Blobs(Protocol):
    """A core's Blob values and files: what :mod:`panelot.idb.blobs` asks of each core.

    The memory core's Blobs are :class:`~panelot.idb.blobs.MemoryBlob` values; the
    browser core's are JS Blobs, held as handles.
    """

    def make(self, data: bytes, mime: str) -> Any:
        """A new Blob of ``data`` (synchronous: may be called inside a transaction body)."""
        ...

    def owns(self, value: Any) -> bool:
        """Whether ``value`` is a Blob of this kind."""
        ...

    def size(self, value: Any) -> int:
        """Byte size of one of this kind's Blobs, without reading its contents."""
        ...

    async def read(self, value: Any) -> bytes:
        """A copy of one of this kind's Blobs' contents (a foreign await in the browser)."""
        ...

    def file(self) -> FileParts:
        """A new file to build from parts (an export's), finished as a Blob of this kind."""
        ...

    def source(self, value: Any) -> ByteSource:
        """One of this kind's Blobs (or a File) read in ranges."""
        ...


class Core(Protocol):
    """An open database connection: the contract both cores fulfil."""

    name: str
    """The database name."""
    version: int
    """The native IndexedDB version the connection was opened at."""
    tables: dict[str, TableSpec]
    """The declared tables, by name."""
    diff: SchemaDiff
    """How the opened database differs from the declaration (see :mod:`panelot.idb.upgrade`)."""
    blobs: Blobs
    """How this core makes, reads and builds Blobs and files."""

    @property
    def versionchanged(self) -> bool:
        """Whether another context's upgrade or delete closed this connection.

        The :class:`~panelot.idb.database.Database` then reopens on its next
        transaction, as Dexie does; an explicit :meth:`close` does not set it.
        """
        ...

    async def run(
        self,
        mode: Mode,
        tables: Sequence[str],
        body: Coroutine[Any, Any, T],
        durability: Durability = "default",
    ) -> T:
        """Drive ``body`` inside one native transaction; commit when it returns, abort on error.

        ``durability`` is the native transaction's (``IDBDatabase.transaction``'s option).
        """
        ...

    def describe(self) -> dict[str, Any]:
        """Return the database's real, installed structure (see :func:`describe_tables`)."""
        ...

    def snapshot(self, values: Sequence[Any]) -> Sequence[Any]:
        """Capture a write's values as they are now, for a :class:`Mutate`.

        Later changes to the caller's objects must not reach the store (IndexedDB clones a
        value when ``put`` is called). Raises
        :class:`~panelot.idb.errors.DataCloneError`, naming the field as
        ``values[i].path``, for a value that cannot be stored.
        """
        ...

    def close(self) -> None:
        """Close the connection."""
        ...


class CoreFactory(Protocol):
    """What opens connections: the memory backend or the browser's ``indexedDB``."""

    async def open(self, name: str, versions: list[SchemaVersion]) -> Core:
        """Open (creating or upgrading as Dexie would) and verify the database."""
        ...

    async def delete(self, name: str) -> None:
        """Delete a whole database."""
        ...

    def channel(self, name: str, feed: ChangeFeed) -> Channel:
        """The change channel that carries ``name``'s changes to the other connections."""
        ...


def describe_tables(name: str, version: int, stores: list[dict[str, Any]]) -> dict[str, Any]:
    """Build the ``db.describe`` shape, with stores and indexes sorted by name."""
    return {
        "name": name,
        "version": version,
        "stores": sorted(
            (dict(s, indexes=sorted(s["indexes"], key=lambda i: i["name"])) for s in stores),
            key=lambda s: s["name"],
        ),
    }
