"""Sync (push) against a real CouchDB-compatible server started by the tests.

The servers' URLs come from the environment (set by the pytest fixture
``couch_servers`` in CPython, and in the page before a case runs): ``PANELOT_TEST_COUCH``
(open) and ``PANELOT_TEST_COUCH_AUTH`` (Basic auth with :data:`AUTH_USER` and
:data:`AUTH_PASSWORD`). Every case uses a fresh database on it (a uuid in its name).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from behavior import Ctx
from panelot.host import HttpRequest
from panelot.store import PanelotStore
from panelot.sync.mapping import local_view

AUTH_USER = "panelot-sync"
AUTH_PASSWORD = "pässword-9f3c-never-shown"  # noqa: S105 - the test server's, on purpose

OPEN_ENV = "PANELOT_TEST_COUCH"
AUTH_ENV = "PANELOT_TEST_COUCH_AUTH"


def server(auth: bool = False) -> str:
    """The base URL of the test server (the one with Basic auth when ``auth``)."""
    name = AUTH_ENV if auth else OPEN_ENV
    url = os.environ.get(name)
    if not url:
        raise AssertionError(f"{name} is not set: the couch_servers fixture starts the server")
    return url


def _auth_header(auth: bool) -> dict[str, str]:
    if not auth:
        return {}
    token = base64.b64encode(f"{AUTH_USER}:{AUTH_PASSWORD}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


async def http_json(
    ctx: Ctx, method: str, url: str, body: Any = None, *, auth: bool = False
) -> tuple[int, Any]:
    """A plain HTTP call through the case's host (``fetch`` in a page); ``(status, JSON)``."""
    headers = {"Accept": "application/json", **_auth_header(auth)}
    data = None
    if body is not None:
        headers["Content-Type"] = "application/json"
        data = json.dumps(body).encode()
    response = await ctx.host.http(HttpRequest(method, url, headers, data))
    return response.status, json.loads(response.body) if response.body else None


async def new_database(ctx: Ctx, *, auth: bool = False) -> str:
    """Create a fresh database on the test server; return its name."""
    name = f"panelot-{uuid.uuid4().hex[:12]}"
    status, answer = await http_json(ctx, "PUT", f"{server(auth)}/{name}", auth=auth)
    assert status in (201, 202), (status, answer)
    return name


async def all_docs(ctx: Ctx, database: str, *, auth: bool = False) -> dict[str, dict[str, Any]]:
    """Every document on the server (``_all_docs?include_docs=true``), by id."""
    url = f"{server(auth)}/{database}/_all_docs?include_docs=true"
    status, answer = await http_json(ctx, "GET", url, auth=auth)
    assert status == 200, (status, answer)
    return {row["id"]: row["doc"] for row in answer["rows"]}


async def synced_store(ctx: Ctx, *, auth: bool = False) -> tuple[PanelotStore, str]:
    """A fresh store configured to sync with a fresh database; ``(store, database)``."""
    store = await ctx.store()
    assert store.sync is not None
    ctx.names.append(store.sync.state_name)  # deleted with the case's databases
    database = await new_database(ctx, auth=auth)
    args: dict[str, Any] = {"server": server(auth), "database": database}
    if auth:
        args.update(user=AUTH_USER, password=AUTH_PASSWORD)
    await store.command("sync.configure", args)
    return store, database


async def push(store: PanelotStore) -> dict[str, Any]:
    """``sync.push``; its report."""
    report: dict[str, Any] = await store.command("sync.push", {})
    return report


async def pull(store: PanelotStore) -> dict[str, Any]:
    """``sync.pull``; its report."""
    report: dict[str, Any] = await store.command("sync.pull", {})
    return report


async def second_store(ctx: Ctx, database: str) -> PanelotStore:
    """Another store of the case (another device) syncing with ``database`` (open server)."""
    store = await ctx.store()
    assert store.sync is not None
    ctx.names.append(store.sync.state_name)
    await store.command("sync.configure", {"server": server(), "database": database})
    return store


async def synced_rows(store: PanelotStore, table: str) -> dict[str, dict[str, Any]]:
    """Every record of ``table`` by id, minus what stays on the device (``local_view``)."""
    rows = await store.db.table(table).to_collection().to_list()
    return {row["id"]: local_view(table, row) for row in rows}


async def put_doc(ctx: Ctx, database: str, doc: dict[str, Any]) -> None:
    """``PUT`` the document ``doc`` (its ``_id``) into ``database`` on the open server."""
    url = f"{server()}/{database}/{doc['_id']}"
    status, said = await http_json(ctx, "PUT", url, doc)
    assert status in (201, 202), (status, said)


FAULTS = "/_panelot_fault"
"""The test server's fault switch (documented at the top of tests/support/couch_server.cjs)."""


async def fault(ctx: Ctx, path: str, kind: str, *, auth: bool = False, **extra: Any) -> None:
    """Inject a fault: the requests whose ``METHOD /url`` matches ``path`` get ``kind``.

    ``extra``: ``method``, ``times``, ``after``, ``status``, ``body``, ``raw``, ``bytes``.
    """
    url = server(auth) + FAULTS
    status, answer = await http_json(ctx, "POST", url, {"path": path, "kind": kind, **extra})
    assert status == 200, (status, answer)


async def clear_faults(ctx: Ctx, *, auth: bool = False) -> list[Any]:
    """Clear every fault of the server; the faults that were left (not yet served)."""
    status, answer = await http_json(ctx, "GET", server(auth) + FAULTS)
    assert status == 200, (status, answer)
    status, cleared = await http_json(ctx, "DELETE", server(auth) + FAULTS)
    assert status == 200, (status, cleared)
    left: list[Any] = answer["faults"]
    return left


UNTIL_TIMEOUT = 30.0
"""How long :func:`until` polls before failing."""


async def until(
    check: Callable[[], Awaitable[object]], what: str, timeout: float = UNTIL_TIMEOUT
) -> None:
    """Poll the async ``check`` until it is truthy; fail naming ``what`` after ``timeout`` s."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not await check():
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        await asyncio.sleep(0.02)
