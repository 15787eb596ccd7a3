"""``PanelotStore``: the Python API over one open ``panelot_v1`` database.

Writes go through the command bus, so the Python API, ``panelot.send`` and the
console share receipts and rules; reads are named queries (:meth:`PanelotStore.query`,
which is what ``panelot.query`` calls), with a few plain methods for the common ones.
The store is the :class:`~panelot.bus.Env` its handlers and queries are handed; the
commands and queries it knows come from :mod:`panelot.api.registry` unless others are
passed in.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Collection, Mapping
from typing import Any

from panelot.api.registry import COMMANDS, LAYERS, QUERIES
from panelot.backup.files import Backup, export_backup, read_backup
from panelot.backup.section import apply_pending, drop_pending, missing_credentials
from panelot.bus import CommandBus, Handler, Query
from panelot.bus.inputs import StagedInputs
from panelot.bus.receipts import receipt_id
from panelot.clock import Clock, now_ms
from panelot.codec import decode_args, id_field
from panelot.errors import UnknownCommandError
from panelot.idb import CoreFactory, Database
from panelot.idb.errors import PanelotError, ValidationError
from panelot.idb.observe import LiveQuery
from panelot.idb.observe.live import DEFAULT_INTERVAL
from panelot.idb.transfer import ExportProgress, ImportProgress
from panelot.lifecycle.startup import StartUp, start_up
from panelot.request.build import build_request
from panelot.request.context import request_context_of
from panelot.request.history import DEFAULT_CONTEXT_BUDGET, check_budget
from panelot.request.slimming import SlimOptions
from panelot.request.thumbnails import Thumbnailer
from panelot.runs.executions import ExecutionRegistry
from panelot.schema import DB_NAME, panelot_database
from panelot.settings.active import Services, services
from panelot.tree.views import context_of, markdown_of, snapshot_of

__all__ = ["PanelotStore"]


class PanelotStore:
    """The store: commands with receipts for writes, named queries for reads."""

    def __init__(
        self,
        db: Database,
        clock: Clock = now_ms,
        client_id: str | None = None,
        *,
        commands: Mapping[str, Handler[Any]] = COMMANDS,
        queries: Mapping[str, Query[Any]] = QUERIES,
    ) -> None:
        self._db = db
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
    def executions(self) -> ExecutionRegistry:
        """The executions registered in this context."""
        return self._executions

    @property
    def inputs(self) -> StagedInputs:
        """Inputs read ahead of a command (:class:`~panelot.bus.inputs.StagedInputs`)."""
        return self._inputs

    @property
    def services(self) -> Services:
        """This context's settings and credentials (:func:`panelot.settings.services`)."""
        return services()

    @classmethod
    async def open(
        cls,
        factory: CoreFactory,
        name: str = DB_NAME,
        clock: Clock = now_ms,
        *,
        retention_days: int | None = None,
        active_thread_id: str | None = None,
        spared_thread_ids: Collection[str] = (),
    ) -> PanelotStore:
        """Open (or create) the database and run the start-up housekeeping.

        :func:`~panelot.lifecycle.startup.start_up` deletes expired receipts, lifts
        stale delete marks, finishes interrupted attachment evictions, archives threads
        older than ``retention_days`` (``None``: retention off) and enforces the
        attachment budget, sparing ``active_thread_id`` (retention also spares every
        id of ``spared_thread_ids``).
        """
        db = await panelot_database(name).open(factory)
        store = cls(db, clock)
        # A restore that crashed between its commit and its settings finishes here.
        await apply_pending(store.services, db, clock())
        store.startup = await start_up(
            db, clock, retention_days, active_thread_id, spared_thread_ids
        )
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

        ``file`` is the backup: a Blob (JS or memory), bytes, or a ``ByteSource``.
        Reads and checks the whole file (nothing is written if any of it is refused),
        stages it and sends ``backup.restore`` naming its SHA-256, then applies the
        settings section once the database transaction has committed. Returns the
        command's envelope (``{status, response}`` or ``{status, error}``); a completed
        one also says whether settings were applied and which credentials to enter
        again (``settingsApplied``, ``missingCredentials``).
        """
        client = self.client_id if client_id is None else client_id
        submission = uuid.uuid4().hex if submission_id is None else submission_id
        async with self._restoring:  # one at a time here: each replaces everything
            try:
                id_field(client, "clientId")
                id_field(submission, "submissionId")
                staged = await read_backup(self.db, file, progress, chunk_size_bytes)
            except PanelotError as exc:
                return {"status": "failed", "error": exc.to_json()}
            staged.receipt_id = receipt_id(client, submission)
            digest = staged.plan.sha256
            self.inputs.stage(digest, staged)
            command = {
                "type": "backup.restore",
                "clientId": client,
                "submissionId": submission,
                "payload": {"sha256": digest, "size": staged.plan.size, "settings": settings},
            }
            try:
                envelope = await self.bus.send(command)
            finally:
                self.inputs.discard(digest)
            return await self._settle_restore(envelope, staged.receipt_id)

    async def _settle_restore(self, envelope: dict[str, Any], receipt: str) -> dict[str, Any]:
        """After a restore's transaction: its settings, and what the envelope says of them.

        The database has committed (or not) by now, so a failure here never turns a
        completed restore into a failed one: it is reported beside it.
        """
        try:
            if envelope["status"] != "completed":  # nothing committed: its settings go
                await drop_pending(self.services, receipt)
                return envelope
            applied = await apply_pending(self.services, self.db, self.clock(), owner=receipt)
            missing = await missing_credentials(self.services)
        except PanelotError as exc:
            applied, missing = False, []
            if envelope["status"] == "completed":
                envelope["settingsError"] = exc.to_json()
        if envelope["status"] == "completed":
            envelope["settingsApplied"] = applied
            envelope["missingCredentials"] = missing
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

        return LiveQuery(
            self.db.feed, querier, on_result=on_result, on_error=on_error, interval=interval
        )

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
        return await context_of(self.db, thread_id, leaf_id, self.clock)

    async def request_context(
        self,
        thread_id: str,
        leaf_id: str | None = None,
        options: SlimOptions | None = None,
        thumbnailer: Thumbnailer | None = None,
        context_budget: int | None = DEFAULT_CONTEXT_BUDGET,
    ) -> dict[str, Any]:
        """The slimmed model request: the context with image bytes (``thread.request``).

        Only the newest turns within ``context_budget`` characters are kept
        (:mod:`panelot.request.history`; ``None``: the whole path).
        """
        check_budget(context_budget)
        context = await request_context_of(self.db, thread_id, leaf_id, context_budget, self.clock)
        return await build_request(self.db, context, options, thumbnailer)

    async def snapshot(self, thread_id: str) -> dict[str, Any]:
        """The UI snapshot of the current leaf."""
        return await snapshot_of(self.db, thread_id, self.clock)

    async def markdown(self, thread_id: str) -> str:
        """Markdown export of the visible path."""
        return await markdown_of(self.db, thread_id, self.clock)

    def close(self) -> None:
        """Close the database connection."""
        self.db.close()
