"""Behavior cases shared by both cores.

Each ``cases_*.py`` module holds ``async def case_<name>(ctx)`` functions that use only
``panelot`` and plain ``assert``. pytest runs every case on the memory core in CPython
(``tests/test_behavior_memory.py``) and, copied into Pyodide's file system, on the
browser core against real IndexedDB in Chromium (``tests/browser/test_behavior_browser.py``).
Nothing here imports pytest, so the same files run unchanged in the page.
"""

from __future__ import annotations

import importlib
import pkgutil
import traceback
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from panelot.host import Host, memory_host
from panelot.idb import CoreFactory, Database, PanelotError, SchemaVersion
from panelot.store import PanelotStore

Case = Callable[["Ctx"], Awaitable[None]]


class Ctx:
    """What a case gets: the core factory, a host and fresh, uniquely named databases."""

    def __init__(self, factory: CoreFactory, kind: str, host: Host | None = None) -> None:
        self.factory = factory
        self.kind = kind  # "memory" or "browser"
        self.host = memory_host() if host is None else host  # the browser's in a page
        self.names: list[str] = []
        self.dbs: list[Database] = []
        self.stores: list[PanelotStore] = []
        self.now = 1_700_000_000_000

    def new_name(self) -> str:
        """Return a database name no other case uses."""
        name = f"bt-{uuid.uuid4().hex[:12]}"
        self.names.append(name)
        return name

    async def open(
        self,
        stores: Mapping[str, str | None] | Sequence[SchemaVersion],
        name: str | None = None,
    ) -> Database:
        """Open a database with one version of ``stores`` (or the given versions)."""
        versions = [SchemaVersion(1, stores)] if isinstance(stores, Mapping) else list(stores)
        db = Database(name or self.new_name(), versions)
        await db.open(self.factory)
        self.dbs.append(db)
        return db

    async def store(self, host: Host | None = None) -> PanelotStore:
        """Open a fresh ``panelot_v1``-schema store with a controllable clock (``ctx.now``).

        On ``host``, else on the case's (``ctx.host``).
        """
        store = await PanelotStore.open(
            self.factory, host or self.host, self.new_name(), clock=self.clock
        )
        self.dbs.append(store.db)
        self.stores.append(store)
        if store.search is not None:  # its search index: closed and deleted with it
            self.names.append(store.search.index.name)
        return store

    def clock(self) -> int:
        """The store clock of this case: advances 1 ms per reading."""
        self.now += 1
        return self.now

    async def cleanup(self) -> None:
        """Close and delete every database the case made."""
        for store in self.stores:
            store.close()
        for db in self.dbs:
            db.close()
        for name in self.names:
            await self.factory.delete(name)


async def raises(kind: type[BaseException], awaitable: Awaitable[Any]) -> BaseException:
    """Await ``awaitable`` and return the error it raised; fail if it raised no ``kind``."""
    try:
        await awaitable
    except kind as exc:
        return exc
    except BaseException as exc:
        raise AssertionError(f"expected {kind.__name__}, got {type(exc).__name__}: {exc}") from exc
    raise AssertionError(f"expected {kind.__name__}, nothing was raised")


def memory_only(fn: Case) -> Case:
    """Mark a case that only the memory core can stage (it is not run in Chromium).

    For what IndexedDB cannot be made to do on cue (closing a connection under a
    running transaction): the browser suite leaves the case out, visibly, instead of
    running a case that returns early.
    """
    fn.memory_only = True  # type: ignore[attr-defined]
    return fn


def discover(kind: str | None = None) -> list[tuple[str, str]]:
    """Return ``(module, case)`` for every case, in a stable order.

    ``module`` is relative to this package (``tree.cases_tree``): the cases of each
    section live in a subpackage named after it. With ``kind="browser"``, the
    :func:`memory_only` cases are left out.
    """
    found = []
    modules = pkgutil.walk_packages(__path__, f"{__name__}.")
    for info in sorted(modules, key=lambda m: m.name):
        name = info.name.removeprefix(f"{__name__}.")
        if not name.rsplit(".", 1)[-1].startswith("cases_"):
            continue
        module = importlib.import_module(info.name)
        for case in sorted(vars(module)):
            if kind == "browser" and getattr(getattr(module, case), "memory_only", False):
                continue
            if case.startswith("case_"):
                found.append((name, case))
    return found


async def run_case(
    module: str, case: str, factory: CoreFactory, kind: str, host: Host | None = None
) -> dict[str, Any]:
    """Run one case on a factory; return ``{"ok": True}`` or ``{"ok": False, "error": text}``.

    ``host`` is the case's (``None``: a fresh memory host).
    """
    fn: Case = getattr(importlib.import_module(f"{__name__}.{module}"), case)
    ctx = Ctx(factory, kind, host)
    try:
        await fn(ctx)
    except (AssertionError, PanelotError, Exception):
        return {"ok": False, "error": traceback.format_exc()}
    finally:
        await ctx.cleanup()
    return {"ok": True}
