"""The browser runtime: what the JS loader calls after installing the package.

``start(db_name)`` opens the ``panelot_v1`` database through the browser core;
``query(name, args_json)`` answers read queries with a JSON envelope
``{"ok": true, "result": ...}`` or ``{"ok": false, "error": {name, message, field?}}``
that the JS bridge turns into a resolved value or a rejection.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from .idb import Database, PanelotError
from .idb.errors import NotFoundError
from .schema import DB_NAME, panelot_database

__all__ = ["QUERIES", "database", "query", "start"]

_db: Database | None = None

QueryHandler = Callable[[Database, dict[str, Any]], Awaitable[Any]]


async def _describe(db: Database, _args: dict[str, Any]) -> Any:
    return db.describe()


QUERIES: dict[str, QueryHandler] = {"db.describe": _describe}
"""Read queries by name."""


async def start(db_name: str = DB_NAME) -> None:
    """Open the store in the page (idempotent)."""
    global _db
    if _db is not None and _db.name == db_name:
        return
    from .idb.browser import BrowserFactory

    _db = await panelot_database(db_name).open(BrowserFactory())


def database() -> Database:
    """Return the open store (after :func:`start`)."""
    if _db is None:
        raise NotFoundError("the store is not started; call start() first")
    return _db


def _envelope_error(exc: BaseException) -> str:
    if isinstance(exc, PanelotError):
        error = exc.to_json()
    else:
        error = {"name": type(exc).__name__, "message": str(exc)}
    return json.dumps({"ok": False, "error": error})


async def query(name: str, args_json: str = "{}") -> str:
    """Run read query ``name`` with JSON arguments; return the JSON envelope."""
    try:
        handler = QUERIES.get(name)
        if handler is None:
            raise NotFoundError(f"unknown query {name!r}", field="name")
        args = json.loads(args_json or "{}")
        if not isinstance(args, dict):
            raise NotFoundError("query arguments must be a JSON object", field="args")
        result = await handler(database(), args)
    except Exception as exc:  # every failure becomes an error envelope, never a JS throw
        return _envelope_error(exc)
    return json.dumps({"ok": True, "result": result})
