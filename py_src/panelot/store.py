"""``PanelotStore``: the Python API over one open ``panelot_v1`` database.

Writes go through the command bus, so the Python API, ``panelot.send`` and the
console share receipts and rules; reads are named queries (:meth:`PanelotStore.query`,
which is what ``panelot.query`` calls), with a few plain methods for the common ones.
The store is the :class:`~panelot.bus.Env` its handlers and queries are handed; the
commands and queries it knows come from :mod:`panelot.api.registry` unless others are
passed in. What differs between a page and CPython (settings storage, key store,
thumbnailer, storage estimate) and what is the store's own (its attachment budget and
freed ledger) is the :class:`~panelot.host.Host` it is opened with.
"""

from __future__ import annotations

import asyncio
import copy
import uuid
from collections.abc import Callable, Collection, Mapping
from dataclasses import replace
from typing import Any

from panelot.api.registry import COMMANDS, LAYERS, QUERIES
from panelot.backup.files import Backup, export_backup
from panelot.backup.restore import finish_interrupted, restore_file
from panelot.bus import CommandBus, Handler, Query
from panelot.bus.inputs import StagedInputs
from panelot.clock import Clock, now_ms
from panelot.codec import decode_args
from panelot.errors import UnknownCommandError
from panelot.host import Host, Services, memory_host
from panelot.host.thumbnails import Thumbnailer
from panelot.idb import CoreFactory, Database
from panelot.idb.errors import ValidationError
from panelot.idb.observe import LiveQuery
from panelot.idb.observe.live import DEFAULT_INTERVAL
from panelot.idb.transfer import ExportProgress, ImportProgress
from panelot.lifecycle.startup import StartUp, start_up
from panelot.request.history import DEFAULT_CONTEXT_BUDGET
from panelot.request.slimming import SlimOptions
from panelot.runs.executions import ExecutionRegistry
from panelot.schema import DB_NAME, panelot_database
from panelot.search.indexer import Indexer
from panelot.search.schema import index_database
from panelot.sync.section import Syncer
from panelot.tree.views import markdown_of

__all__ = ["PanelotStore"]


class PanelotStore:
    """The store: commands with receipts for writes, named queries for reads."""

    def __init__(
        self,
        db: Database,
        clock: Clock = now_ms,
        client_id: str | None = None,
        *,
        host: Host | None = None,
        commands: Mapping[str, Handler[Any]] = COMMANDS,
        queries: Mapping[str, Query[Any]] = QUERIES,
        search: Indexer | None = None,
        sync: Syncer | None = None,
    ) -> None:
        """A store over open ``db`` on ``host`` (``None``: a fresh :func:`memory_host`).

        ``search`` is the indexer of its search index (:meth:`open` starts one), which
        the store then owns: closing the store closes it. ``sync`` is its sync section
        (:meth:`open` makes one), owned alike.
        """
        self._db = db
        self._search = search
        self._sync = sync
        self._host = memory_host() if host is None else host
        self._clock = clock
        self._executions = ExecutionRegistry()
        self._inputs = StagedInputs()
        self._restoring = asyncio.Lock()
        self.queries = queries
        self.bus = CommandBus(self, commands, LAYERS)
        self.client_id = client_id or f"py-{uuid.uuid4().hex[:12]}"
        self.startup: StartUp = {"finished": 0, "archived": 0, "evicted": 0}
        """What start-up housekeeping did: ``{finished, archived, evicted}``."""

    # -- the Env handlers and queries are handed ------------------------------------------

    @property
    def db(self) -> Database:
        """The open database."""
        return self._db

    @property
    def clock(self) -> Clock:
        """The store's clock."""
        return self._clock

    @property
    def search(self) -> Indexer | None:
        """The indexer that keeps the search index true (``None``: opened without one)."""
        return self._search

    @property
    def sync(self) -> Syncer | None:
        """The sync section (``None``: built without one; :meth:`open` makes one)."""
        return self._sync

    @property
    def executions(self) -> ExecutionRegistry:
        """The executions registered in this context."""
        return self._executions

    @property
    def inputs(self) -> StagedInputs:
        """Inputs read ahead of a command (:class:`~panelot.bus.inputs.StagedInputs`)."""
        return self._inputs

    @property
    def host(self) -> Host:
        """Where this store runs: settings, credentials, thumbnailer, storage estimate, budget."""
        return self._host

    @property
    def services(self) -> Services:
        """This store's settings and credentials (its host's)."""
        return self._host.services

    @classmethod
    async def open(
        cls,
        factory: CoreFactory,
        host: Host | None = None,
        name: str = DB_NAME,
        clock: Clock = now_ms,
        *,
        retention_days: int | None = None,
        active_thread_id: str | None = None,
        spared_thread_ids: Collection[str] = (),
        search: bool = True,
    ) -> PanelotStore:
        """Open (or create) the database on ``host`` and run the start-up housekeeping.

        ``host`` is :func:`panelot.host.browser_host` in a page (``panelot.runtime``
        builds it) or :func:`panelot.host.memory_host` in CPython, which ``None`` gives:
        a fresh one, so two stores opened without a host share no settings.
        :func:`~panelot.lifecycle.startup.start_up` deletes expired receipts, lifts
        stale delete marks, finishes interrupted attachment evictions, archives threads
        older than ``retention_days`` (``None``: retention off) and enforces the
        attachment budget (the host's), sparing ``active_thread_id`` (retention also
        spares every id of ``spared_thread_ids``).

        With ``search`` (the default), the search index database (``panelot_search_v1``
        beside ``panelot_v1``, on the same factory) is opened too, and its
        :class:`~panelot.search.indexer.Indexer` starts: it catches up (or rebuilds)
        in the background, after the housekeeping, and follows the change feed.
        The store's sync section (:class:`~panelot.sync.section.Syncer`) is made too;
        its state database (``panelot_sync_v1``) opens only when sync is first used.
        """
        db = await panelot_database(name).open(factory)
        indexer = None
        if search:
            lock = None if host is None else host.search_lock  # one indexer per origin
            indexer = Indexer(db, await index_database(name).open(factory), clock, lock=lock)
        # The sync section opens its state database (panelot_sync_v1) on first use only.
        store = cls(db, clock, host=host, search=indexer, sync=Syncer(db, factory, clock))
        # A restore that crashed between its commit and its settings finishes here.
        await finish_interrupted(store.services, db, clock())
        store.startup = await start_up(
            db,
            clock,
            store.host.storage.budget,
            retention_days,
            active_thread_id,
            spared_thread_ids,
        )
        if indexer is not None:
            indexer.start()
        return store

    # -- writes: commands ------------------------------------------------------------

    async def send(self, command: Any) -> dict[str, Any]:
        """Run a bus command; return ``{status, response}`` or ``{status, error}``."""
        return await self.bus.send(command)

    async def command(
        self, kind: str, payload: dict[str, Any], submission_id: str | None = None
    ) -> Any:
        """Run a command as this store's client and return its response (raises on failure)."""
        return await self.bus.execute(
            {
                "type": kind,
                "clientId": self.client_id,
                "submissionId": submission_id or uuid.uuid4().hex,
                "payload": payload,
            }
        )

    async def create_thread(self, title: str = "", **meta: Any) -> str:
        """Create a thread; return its id."""
        return str((await self.command("thread.create", {"title": title, **meta}))["threadId"])

    async def append(
        self, thread_id: str, node_type: str, payload: dict[str, Any], **kw: Any
    ) -> dict[str, Any]:
        """Append a node (``parentId=`` defaults to the leaf); return ``{nodeId, seq, leafId}``."""
        body = {"threadId": thread_id, "type": node_type, "payload": payload, **kw}
        result: dict[str, Any] = await self.command("message.append", body)
        return result

    # -- backup and restore -------------------------------------------------------------

    async def export_backup(
        self,
        *,
        settings: bool = True,
        progress: Callable[[ExportProgress], Any] | None = None,
    ) -> Backup:
        """Back up everything (the ``backup.export`` query, with progress reports)."""
        return await export_backup(
            self.db, self.services if settings else None, progress, self.clock
        )

    async def restore_backup(
        self,
        file: Any,
        *,
        submission_id: str | None = None,
        client_id: str | None = None,
        settings: bool = True,
        progress: Callable[[ImportProgress], Any] | None = None,
        chunk_size_bytes: int = 1024 * 1024,
    ) -> dict[str, Any]:
        """Replace everything with a backup: the ``backup.restore`` command, file included.

        ``file`` is the backup: a Blob (JS or memory), bytes, or a ``ByteSource``. Runs
        :func:`panelot.backup.restore.restore_file` (one restore at a time per store) and
        returns its envelope (``{status, response}`` or ``{status, error}``, a completed
        one with ``settingsApplied`` and ``missingCredentials``).
        """
        async with self._restoring:  # one at a time here: each replaces everything
            envelope = await restore_file(
                self,
                self.bus.send,
                file,
                client_id=self.client_id if client_id is None else client_id,
                submission_id=submission_id,
                settings=settings,
                progress=progress,
                chunk_size_bytes=chunk_size_bytes,
            )
        if envelope.get("status") == "completed" and self._search is not None:
            self._search.rebuild_soon()  # derived data: rebuilt from what was restored
        return envelope

    # -- reads: queries --------------------------------------------------------------

    async def query(self, name: str, args: dict[str, Any] | None = None) -> Any:
        """Run a named read query (see :mod:`panelot.api.registry`)."""
        query, decoded = self._query(name, args)
        return await query.run(self, decoded)

    def live(
        self,
        name: str,
        args: dict[str, Any] | None = None,
        *,
        on_result: Callable[[Any], Any] | None = None,
        on_error: Callable[[BaseException], Any] | None = None,
        interval: float = DEFAULT_INTERVAL,
    ) -> LiveQuery[Any]:
        """Named query ``name`` as a live query: its result now, and after each change to it.

        The changes may come from any context on the database (other panels, the
        service worker, Dexie code). An unknown name or bad arguments raise here, at
        once. Iterate over the result with ``async for``, or pass ``on_result``; call
        ``close()`` when done. See :class:`panelot.idb.observe.LiveQuery`.
        """
        query, decoded = self._query(name, args)

        async def querier() -> Any:
            return await query.run(self, decoded)

        feeds = [self.db.feed]
        if self._search is not None and name.startswith("search."):
            # The search queries read the index database too: its commits wake them. No
            # other query hears them (an index commit during a run would count as a change
            # and hold back that query's next re-run: panels stream while indexing runs).
            feeds.append(self._search.index.feed)
        return LiveQuery(feeds, querier, on_result=on_result, on_error=on_error, interval=interval)

    def _query(self, name: str, args: dict[str, Any] | None) -> tuple[Query[Any], Any]:
        query = self.queries.get(name)
        if query is None:
            raise UnknownCommandError(
                f"unknown query {name!r}; known: {sorted(self.queries)}", field="name"
            )
        if args is not None and not isinstance(args, dict):
            raise ValidationError("args: must be an object", field="args")
        return query, decode_args(query.args, args or {})

    async def context(self, thread_id: str, leaf_id: str | None = None) -> dict[str, Any]:
        """``build_session_context``: provider-neutral messages, turn context and path."""
        context: dict[str, Any] = await self.query("thread.context", _ids(thread_id, leaf_id))
        return context

    async def request_context(
        self,
        thread_id: str,
        leaf_id: str | None = None,
        options: SlimOptions | None = None,
        thumbnailer: Thumbnailer | None = None,
        context_budget: int | None = DEFAULT_CONTEXT_BUDGET,
        model: str | None = None,
    ) -> dict[str, Any]:
        """The slimmed model request: ``thread.request`` (``thumbnailer``: the host's).

        Only the newest turns within ``context_budget`` characters are kept
        (:mod:`panelot.request.history`; ``None``: the whole path).
        """
        opts = options or SlimOptions()
        args = {
            **_ids(thread_id, leaf_id),
            "seenImages": opts.seen_images,
            "imageBudget": opts.image_budget,
            "staleStubs": opts.stale_stubs,
            "contextBudget": context_budget,
        }
        if model is not None:
            args["model"] = model
        on = self if thumbnailer is None else self._on(replace(self.host, thumbnailer=thumbnailer))
        request: dict[str, Any] = await on.query("thread.request", args)
        return request

    async def snapshot(self, thread_id: str) -> dict[str, Any]:
        """The UI snapshot of the current leaf (``thread.snapshot``)."""
        snapshot: dict[str, Any] = await self.query("thread.snapshot", {"threadId": thread_id})
        return snapshot

    async def markdown(self, thread_id: str) -> str:
        """Markdown export of the visible path (without a retention summary)."""
        return await markdown_of(self.db, thread_id, self.clock)

    def _on(self, host: Host) -> PanelotStore:
        """This store (its database, executions and inputs) seen on another host."""
        other = copy.copy(self)
        other._host = host
        return other

    def close(self) -> None:
        """Close the database connection (and the search index's and sync state's)."""
        if self._search is not None:
            self._search.close()
        if self._sync is not None:
            self._sync.close()
        self.db.close()


def _ids(thread_id: str, leaf_id: str | None) -> dict[str, Any]:
    """``{threadId, leafId?}``: a leaf only when one is named."""
    return (
        {"threadId": thread_id} if leaf_id is None else {"threadId": thread_id, "leafId": leaf_id}
    )
