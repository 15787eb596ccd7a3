"""``Database`` and ``Transaction``: opening a declared schema and running transactions.

>>> db = Database("panelot_v1", [SchemaVersion(1, {"threads": "id, updatedAt"})])
>>> await db.open(MemoryFactory())                        # or BrowserFactory() in Pyodide
>>> async def body(tx: Transaction) -> int:
...     thread = await tx.table("threads").get("t1")      # read ...
...     await tx.table("threads").put({**thread, "n": 1})  # ... then write, same transaction
...     return 1
>>> await db.transaction("rw", ["threads"], body)

The body is an ``async def`` that receives the transaction. It may await any number
of operations of that transaction, one after another; it must not await anything
else (see :class:`~panelot.idb.errors.PrematureCommitError`). If it raises, the
transaction is aborted and nothing it wrote remains.

Durability: a read-write transaction is reported committed as the browser chooses
(``"default"``: relaxed in Chrome since version 121, before the data is flushed) unless
the database's ``chrome_transaction_durability`` (Dexie's ``chromeTransactionDurability``)
or the transaction's own ``durability`` says ``"strict"`` (reported committed once it is
on disk) or ``"relaxed"``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from panelot.idb.core import DURABILITIES, Core, CoreFactory, Durability, Mode, Request
from panelot.idb.driver import gather, in_body
from panelot.idb.errors import (
    AbortError,
    InvalidArgumentError,
    InvalidStateError,
    InvalidTableError,
    NotFoundError,
    PrematureCommitError,
    ReadOnlyError,
)
from panelot.idb.hooks import Hooks
from panelot.idb.middleware import Create, Handler, Middleware, build, through
from panelot.idb.observe.changes import ALL
from panelot.idb.observe.feed import ChangeFeed
from panelot.idb.observe.live import DEFAULT_INTERVAL, LiveQuery
from panelot.idb.observe.ranges import RangeSet
from panelot.idb.observe.track import Observed, Recorder, reading, reusing
from panelot.idb.schema import SchemaVersion, TableSpec
from panelot.idb.table import Table

__all__ = ["Database", "Transaction", "check_durability"]

T = TypeVar("T")


def check_durability(value: object, option: str) -> Durability:
    """Return ``value`` as a :data:`~panelot.idb.core.Durability`, or raise naming ``option``."""
    for durability in DURABILITIES:
        if value == durability and isinstance(value, str):
            return durability
    raise InvalidArgumentError(
        f"{option} must be 'default', 'strict' or 'relaxed', not {value!r}", field=option
    )


async def _body(body: Callable[[Transaction], Awaitable[T]], tx: Transaction) -> T:
    return await body(tx)


class Transaction:
    """One running transaction, handed to a transaction body."""

    def __init__(
        self, db: Database, mode: Mode, tables: Sequence[str], durability: Durability = "default"
    ) -> None:
        self.db = db
        self.mode: Mode = mode
        self.tables = tuple(tables)
        self.durability: Durability = durability
        """The durability the native transaction was opened with."""

    def table(self, name: str) -> Table:
        """Return ``name`` bound to this transaction; it must be in the transaction's scope."""
        if name not in self.tables:  # Dexie's NotFoundError ("not part of transaction")
            raise NotFoundError(
                f"table {name!r} is not part of this transaction {list(self.tables)}", field=name
            )
        return Table(self.db, self.db.spec(name), self)

    def check_write(self, table: str) -> None:
        """Raise :class:`ReadOnlyError` if this transaction cannot write."""
        if self.mode != "rw":
            raise ReadOnlyError(f"cannot write to {table!r} in a readonly transaction")

    async def request(self, req: Request) -> Any:
        """Await one core request inside this transaction."""
        return await req

    async def gather(self, *operations: Awaitable[Any]) -> list[Any]:
        """Run operations of this transaction together, in one round trip per step.

        >>> thread, last = await tx.gather(threads.get(tid), nodes.where(...).last())

        The operations are issued in the order given and IndexedDB runs them in that
        order; results come back in the same order. See :func:`~panelot.idb.driver.gather`.
        """
        return await gather(*operations)

    def abort(self, reason: str = "aborted by the caller") -> None:
        """Abort the transaction: raises :class:`AbortError` out of the body."""
        raise AbortError(reason)


class Database:
    """A named database with Dexie-style versioned declarations."""

    def __init__(
        self,
        name: str,
        versions: Sequence[SchemaVersion],
        observe: bool = True,
        *,
        chrome_transaction_durability: Durability = "default",
    ) -> None:
        self.name = name
        self.versions = list(versions)
        self.chrome_transaction_durability = check_durability(
            chrome_transaction_durability, "chrome_transaction_durability"
        )
        """The durability of every transaction that names none (Dexie's
        ``chromeTransactionDurability``): ``"default"``, ``"strict"`` or ``"relaxed"``."""
        self.durability_log: list[tuple[Mode, tuple[str, ...], Durability]] | None = None
        """When a list (a test sets it), each committed read-write transaction appends
        its mode, tables and durability: what tests check the domain asks for."""
        self.observe = observe
        """Record and publish what each read-write transaction changes (the default).

        Off, this connection's writes wake no live query, here or in any other context
        (Dexie's included): for a tool that owns the database alone, or to measure what
        observing costs."""
        self._core: Core | None = None
        self._factory: CoreFactory | None = None
        self._reopening: asyncio.Future[Core] | None = None
        self.reopened = 0
        """How many times a ``versionchange`` closed the connection and it was reopened."""
        self.feed = ChangeFeed(name)
        """This connection's change feed (see :mod:`panelot.idb.observe`)."""
        self._middleware: list[Middleware] = []
        self._handler: Handler | None = None
        self.hooks = Hooks()
        """The tables' hooks (``table.hook("creating", fn)``; see :mod:`panelot.idb.hooks`)."""

    def use(self, create: Create, *, name: str = "", level: int = 0) -> Database:
        """Add a middleware over the core protocol; return ``self`` (Dexie's ``db.use``).

        ``create(down)`` returns the handler of this level: an ``async`` function of one
        request that answers it, usually by awaiting ``down(request)`` and changing the
        request or its result. Higher levels see requests first. See
        :mod:`panelot.idb.middleware`.
        """
        if not callable(create):
            raise InvalidArgumentError("use() takes a function from a handler to a handler")
        self._middleware.append(Middleware(create, name, level))
        self._handler = build(self._middleware)
        return self

    def unuse(self, name: str) -> Database:
        """Remove the middleware registered under ``name``; return ``self``."""
        self._middleware = [m for m in self._middleware if m.name != name]
        self._handler = build(self._middleware) if self._middleware else None
        return self

    async def open(self, factory: CoreFactory) -> Database:
        """Open (create or upgrade as Dexie would) and verify the database; return ``self``.

        A database newer than the declaration (another app's ``version(2)``) is opened
        at its own version, and a declared store or index it lacks is added by a version
        bump, as Dexie 4 does: the differences are warned about and reported by
        :meth:`describe`. Only a changed primary key is refused
        (:class:`~panelot.idb.errors.UpgradeError`).

        The connection publishes its commits on the factory's change channel
        (:meth:`~panelot.idb.core.CoreFactory.channel`) and hears the other contexts' there.
        """
        self._core = await factory.open(self.name, self.versions)
        self._factory = factory
        if self.feed.channel is None:
            self.feed.channel = factory.channel(self.name, self.feed)
        return self

    async def ready(self) -> Core:
        """The open connection, reopened first if another context's upgrade closed it.

        As Dexie does, a ``versionchange`` (another connection upgrading or deleting the
        database) closes this connection at once, so that the upgrade can proceed; the
        next transaction opens it again, at the new version (a newer database is worked
        with as it is, see :meth:`open`). Every live query of this connection then runs
        again, since the upgrade may have changed anything. Concurrent callers share one
        reopening.
        """
        core = self.core
        if not core.versionchanged:
            return core
        if self._reopening is None:
            self._reopening = asyncio.ensure_future(self._reopen())
        reopening = self._reopening
        try:
            return await asyncio.shield(reopening)
        finally:
            if self._reopening is reopening and reopening.done():
                self._reopening = None

    async def _reopen(self) -> Core:
        assert self._factory is not None
        old = self.core
        core = await self._factory.open(self.name, self.versions)
        if self._core is not old:  # closed (or reopened) meanwhile: keep theirs
            core.close()
            return self.core
        old.close()
        self._core = core
        self.reopened += 1
        self.feed.received_set({ALL: RangeSet.full()})  # what the upgrade did is unknown
        return core

    @property
    def core(self) -> Core:
        """The open connection; raises :class:`InvalidStateError` before :meth:`open`."""
        if self._core is None:
            raise InvalidStateError(f"{self.name}: the database is not open")
        return self._core

    @property
    def version(self) -> int:
        """The native IndexedDB version of the open database."""
        return self.core.version

    def spec(self, name: str) -> TableSpec:
        """Return the declared spec of table ``name``."""
        spec = self.core.tables.get(name)
        if spec is None:
            raise InvalidTableError(f"no table named {name!r} in {self.name}", field=name)
        return spec

    def table(self, name: str) -> Table:
        """Return table ``name``; each of its calls runs in a transaction of its own."""
        return Table(self, self.spec(name), None)

    async def transaction(
        self,
        mode: Mode,
        tables: str | Sequence[str],
        body: Callable[[Transaction], Awaitable[T]],
        *,
        durability: Durability | None = None,
    ) -> T:
        """Run ``body(tx)`` in one transaction over ``tables``; return what it returns.

        ``durability`` overrides the database's ``chrome_transaction_durability`` for
        this transaction: ``"strict"`` where something irreversible follows the commit.
        """
        if mode not in ("r", "rw"):
            raise ValueError(f"mode must be 'r' or 'rw', not {mode!r}")
        chosen = (
            self.chrome_transaction_durability
            if durability is None
            else check_durability(durability, "durability")
        )
        if in_body():
            raise PrematureCommitError(
                "a transaction was started inside another transaction's body; "
                "use tx.table(...) to work inside the running transaction"
            )
        names = [tables] if isinstance(tables, str) else list(tables)
        for name in names:
            if name not in self.core.tables:  # Dexie's NotFoundError, as for a table
                raise NotFoundError(  # out of a transaction's scope
                    f"no table named {name!r} in {self.name} for this transaction", field=name
                )
        tx = Transaction(self, mode, names, chosen)
        reads = reading.get()
        if reads is not None and mode == "rw":
            raise ReadOnlyError(
                "a live query's querier started a readwrite transaction; it may only read"
            )

        handler = self._handler

        async def run_body() -> T:
            if handler is not None:
                result: T = await through(handler, _body(body, tx))
                return result
            return await body(tx)

        core = self.core if not self.core.versionchanged else await self.ready()
        if mode == "r":
            if reads is None:
                return await core.run(mode, names, run_body(), chosen)
            recorder = Recorder(self.name, core.tables, reads=True, into=reads)
            reuse = reusing.get()
            if reuse is not None:
                reuse.bind(core, self.name, core.tables)
            return await core.run(mode, names, Observed(run_body(), recorder, reuse), chosen)
        if not self.observe:
            result: T = await core.run(mode, names, run_body(), chosen)
        else:
            recorder = Recorder(self.name, core.tables, reads=False)
            result = await core.run(mode, names, Observed(run_body(), recorder), chosen)
            self.feed.committed(recorder.into)  # after the commit; an abort raised above
        if self.durability_log is not None:
            self.durability_log.append((mode, tx.tables, chosen))
        return result

    def live_query(
        self,
        body: Callable[[Transaction], Awaitable[T]],
        tables: str | Sequence[str] | None = None,
        *,
        on_result: Callable[[T], Any] | None = None,
        on_error: Callable[[BaseException], Any] | None = None,
        interval: float = DEFAULT_INTERVAL,
    ) -> LiveQuery[T]:
        """Run the read-only ``body(tx)`` now, and again after each change to what it read.

        ``tables`` is the transaction's scope (every table by default). The changes
        may come from this connection or from any other context on the database,
        Dexie's included. See :class:`~panelot.idb.observe.live.LiveQuery`; for a
        querier that runs transactions of its own, build a ``LiveQuery(db.feed, fn)``.
        """
        scope = list(self.core.tables) if tables is None else tables

        async def querier() -> T:
            return await self.transaction("r", scope, body)

        return LiveQuery(
            self.feed, querier, on_result=on_result, on_error=on_error, interval=interval
        )

    def describe(self) -> dict[str, Any]:
        """Return the real, installed structure of the database.

        ``{"name", "version", "stores"}``, and ``"schemaDiff"`` when the installed
        database differs from the declaration (see :class:`~panelot.idb.upgrade.SchemaDiff`):
        ``{declaredVersion, foundVersion, newer, extraTables, extraIndexes,
        changedIndexes, added}``.
        """
        core = self.core
        described = core.describe()
        if core.diff.differs:
            described["schemaDiff"] = core.diff.to_json()
        return described

    def close(self) -> None:
        """Close the connection."""
        if self._core is not None:
            self._core.close()
            self._core = None
        self.feed.close()
