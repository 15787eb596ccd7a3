"""``PanelotStore``: the Python API over one open ``panelot_v1`` database.

Writes go through the command bus, so the Python API, ``panelot.send`` and the
console share receipts and rules; reads are plain methods, also reachable by name
through :meth:`PanelotStore.query` (which is what ``panelot.query`` calls).
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from panelot.api.attachments import ATTACHMENT_QUERIES, start_up
from panelot.api.library import LIBRARY_QUERIES
from panelot.api.runs import RUN_QUERIES
from panelot.api.settings import SETTINGS_QUERIES
from panelot.bus.bus import CommandBus
from panelot.bus.receipts import cleanup_receipts, list_receipts
from panelot.clock import Clock, now_ms
from panelot.errors import UnknownCommandError
from panelot.idb import CoreFactory, Database
from panelot.idb.errors import NotFoundError, ValidationError
from panelot.lifecycle.thread_delete import release_stale_deletes
from panelot.request.build import REQUEST_QUERIES, build_request
from panelot.request.slimming import SlimOptions
from panelot.request.thumbnails import Thumbnailer
from panelot.schema import DB_NAME, panelot_database
from panelot.tree.context import session_context, thread_markdown, ui_snapshot
from panelot.tree.listing import list_threads
from panelot.tree.loading import check_thread, load_thread
from panelot.tree.nodes import TREE_TABLES, get_thread, siblings
from panelot.tree.records import thread_to_wire
from panelot.tree.transfer import export_thread

__all__ = ["PanelotStore"]

QueryFn = Callable[["PanelotStore", dict[str, Any]], Awaitable[Any]]


def _str(args: dict[str, Any], name: str, required: bool = True) -> Any:
    value = args.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise ValidationError(f"{name}: must be a string", field=name)
    return value


class PanelotStore:
    """The store: commands with receipts for writes, named queries for reads."""

    def __init__(self, db: Database, clock: Clock = now_ms, client_id: str | None = None) -> None:
        self.db = db
        self.clock = clock
        self.bus = CommandBus(db, clock)
        self.client_id = client_id or f"py-{uuid.uuid4().hex[:12]}"
        self.startup: dict[str, Any] = {}
        """What start-up housekeeping did: ``{finished, archived, evicted}``."""

    @classmethod
    async def open(
        cls,
        factory: CoreFactory,
        name: str = DB_NAME,
        clock: Clock = now_ms,
        *,
        retention_days: int | None = None,
        active_thread_id: str | None = None,
    ) -> PanelotStore:
        """Open (or create) the database, clean up expired receipts and stale delete marks.

        Start-up housekeeping (:func:`~panelot.api.attachments.start_up`) then finishes
        interrupted attachment evictions, archives threads older than ``retention_days``
        (``None``: retention off) and enforces the attachment budget, sparing
        ``active_thread_id``.
        """
        db = await panelot_database(name).open(factory)
        store = cls(db, clock)
        await cleanup_receipts(db, clock())
        await release_stale_deletes(db, clock())
        store.startup = await start_up(db, clock, retention_days, active_thread_id)
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

    # -- reads: queries --------------------------------------------------------------

    async def query(self, name: str, args: dict[str, Any] | None = None) -> Any:
        """Run a named read query (see :data:`QUERIES`)."""
        fn = QUERIES.get(name)
        if fn is None:
            raise UnknownCommandError(
                f"unknown query {name!r}; known: {sorted(QUERIES)}", field="name"
            )
        if args is not None and not isinstance(args, dict):
            raise ValidationError("args: must be an object", field="args")
        return await fn(self, args or {})

    async def context(self, thread_id: str, leaf_id: str | None = None) -> dict[str, Any]:
        """``build_session_context``: provider-neutral messages, turn context and path."""
        loaded = await load_thread(self.db, thread_id, leaf_id, self.clock)
        if loaded.problem:
            raise NotFoundError(f"leafId: {loaded.problem}", field="leafId")
        return session_context(loaded)

    async def request_context(
        self,
        thread_id: str,
        leaf_id: str | None = None,
        options: SlimOptions | None = None,
        thumbnailer: Thumbnailer | None = None,
    ) -> dict[str, Any]:
        """The slimmed model request: the context with image bytes (``panelot.request.build``)."""
        context = await self.context(thread_id, leaf_id)
        return await build_request(self.db, context, options, thumbnailer)

    async def snapshot(self, thread_id: str) -> dict[str, Any]:
        """The UI snapshot of the current leaf."""
        return ui_snapshot(await load_thread(self.db, thread_id, None, self.clock))

    async def markdown(self, thread_id: str) -> str:
        """Markdown export of the visible path."""
        return thread_markdown(await load_thread(self.db, thread_id, None, self.clock))

    def close(self) -> None:
        """Close the database connection."""
        self.db.close()


async def _q_list(s: PanelotStore, a: dict[str, Any]) -> Any:
    archived = a.get("archived", False)
    if archived is not None and not isinstance(archived, bool):
        raise ValidationError("archived: must be true, false or null", field="archived")
    return await list_threads(
        s.db,
        archived=archived,
        folder_id=_str(a, "folderId", False),
        tag=_str(a, "tag", False),
        limit=a.get("limit"),
    )


async def _q_get(s: PanelotStore, a: dict[str, Any]) -> Any:
    thread_id = _str(a, "threadId")
    return thread_to_wire(
        await s.db.transaction("r", TREE_TABLES, lambda tx: get_thread(tx, thread_id))
    )


async def _q_context(s: PanelotStore, a: dict[str, Any]) -> Any:
    return await s.context(_str(a, "threadId"), _str(a, "leafId", False))


async def _q_snapshot(s: PanelotStore, a: dict[str, Any]) -> Any:
    return await s.snapshot(_str(a, "threadId"))


async def _q_siblings(s: PanelotStore, a: dict[str, Any]) -> Any:
    node_id = _str(a, "nodeId")
    return await s.db.transaction("r", TREE_TABLES, lambda tx: siblings(tx, node_id))


async def _q_export(s: PanelotStore, a: dict[str, Any]) -> Any:
    fmt = a.get("format", "json")
    if fmt == "json":
        return {"data": await export_thread(s.db, _str(a, "threadId"), s.clock)}
    if fmt == "markdown":
        return {"markdown": await s.markdown(_str(a, "threadId"))}
    raise ValidationError("format: must be 'json' or 'markdown'", field="format")


async def _q_check(s: PanelotStore, a: dict[str, Any]) -> Any:
    return await check_thread(s.db, _str(a, "threadId"))


async def _q_describe(s: PanelotStore, a: dict[str, Any]) -> Any:
    return s.db.describe()


async def _q_receipts(s: PanelotStore, a: dict[str, Any]) -> Any:
    limit = a.get("limit")
    if limit is None:
        limit = 50
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
        raise ValidationError("limit: must be a non-negative integer", field="limit")
    return await list_receipts(s.db, _str(a, "clientId", False), limit)


QUERIES: dict[str, QueryFn] = {
    "thread.list": _q_list,
    "thread.get": _q_get,
    "thread.context": _q_context,
    "thread.snapshot": _q_snapshot,
    "thread.siblings": _q_siblings,
    "thread.export": _q_export,
    "thread.check": _q_check,
    "db.describe": _q_describe,
    "receipts.list": _q_receipts,
    **LIBRARY_QUERIES,
    **RUN_QUERIES,
    **ATTACHMENT_QUERIES,
    **REQUEST_QUERIES,
    **SETTINGS_QUERIES,
}
"""Every read query by name, as ``panelot.query`` exposes them."""
