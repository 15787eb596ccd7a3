"""``Syncer``: the store's sync section, and :func:`syncer_of` for the API.

A store opened by :meth:`~panelot.store.PanelotStore.open` has one. Its state database
(:mod:`panelot.sync.state`) is opened on first use, on the store's core factory, and
closed with the store. One push or pull runs at a time per store (an ``asyncio.Lock``).
After a backup restore sync is paused (:mod:`panelot.sync.pause`): push, pull and start
refuse with a ``SyncPausedError`` and the loop waits, until :meth:`Syncer.resume`.
:meth:`Syncer.start` runs the continuous loop (:class:`~panelot.sync.live.Live`) until
:meth:`Syncer.stop` or the store closes; its pushes and pulls take the same lock.
Every push and pull reports its progress into the state (:mod:`panelot.sync.progress`),
and a loop's or a background sync's failure is kept there (:mod:`panelot.sync.failure`),
so :meth:`Syncer.status` in any context shows both.

The configuration (server, database, user, and the reference of the password in the
host's encrypted credential store) is kept in the state database, never in a backup;
the password is read from the credential store when a push starts and goes only into
the ``Authorization`` header of requests to the configured server.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any, Protocol, runtime_checkable

from panelot.clock import Clock
from panelot.errors import SyncPausedError
from panelot.host import Host
from panelot.host.http import DEFAULT_TIMEOUT
from panelot.idb import CoreFactory, Database, Transaction
from panelot.idb.errors import NotFoundError, ValidationError
from panelot.sync import failure, progress
from panelot.sync.clock import Hlc
from panelot.sync.couch import Couch
from panelot.sync.demand import fetch_attachment, locate
from panelot.sync.fetch import wait_changes
from panelot.sync.live import DEBOUNCE, POLL_SECONDS, Live, Sleep
from panelot.sync.outbox import WIDE, size
from panelot.sync.pause import acknowledge, check, current, seen_now
from panelot.sync.progress import Progress
from panelot.sync.pull import Send, pull
from panelot.sync.push import BATCH_DOCS, push
from panelot.sync.replace import replace_server
from panelot.sync.server import (
    Target,
    basic_auth,
    check_database,
    check_password,
    check_server,
    check_user,
)
from panelot.sync.state import STATE_TABLES, read_meta, state_database, write_meta

__all__ = ["PAUSED_MESSAGE", "RESUME_MODES", "Config", "Syncer", "Syncing", "syncer_of"]

RESUME_MODES = ("merge", "replace")
"""``sync.resume``'s modes: merge with the server, or let the server take the restore."""

PAUSED_MESSAGE = (
    "sync: paused after a backup restore; say how to go on first with "
    'sync.resume {mode: "merge"} (the restored data merges with the server, nothing '
    'deleted there) or {mode: "replace"} (the server takes the restored data)'
)
"""The ``SyncPausedError``'s message."""

log = logging.getLogger("panelot.sync")

Config = dict[str, Any]
"""``{server, database, user?, ref?}``: the sync configuration as the state keeps it."""


class Syncer:
    """The sync section of one store."""

    def __init__(self, db: Database, factory: CoreFactory, clock: Clock) -> None:
        """The section of the store over ``db`` (its state on ``factory``)."""
        self._db = db
        self._factory = factory
        self._clock = clock
        self._state: Database | None = None
        self._opening = asyncio.Lock()
        self._running = asyncio.Lock()
        self.live: Live | None = None
        """The continuous loop while started (:meth:`start`), else ``None``."""
        self.sleep: Sleep = asyncio.sleep
        """How the loop waits out a failure's backoff (a test injects its own)."""
        self.poll_seconds = POLL_SECONDS
        """The loop's long-poll timeout, in seconds."""
        self.debounce = DEBOUNCE
        """Seconds from a change heard to the loop's push."""
        self.timeout = DEFAULT_TIMEOUT
        """Seconds a call to the server may take (the long-poll's is its own)."""
        self.batch_docs = BATCH_DOCS
        """At most this many documents per ``_bulk_docs`` of a push."""
        self.context = progress.COMMAND
        """Which kind of context this store syncs in: ``background`` in the service
        worker (set by :func:`~panelot.sync.background.sync_once`), else ``command``."""

    @property
    def state_name(self) -> str:
        """The name of the state database."""
        return state_database(self._db.name).name

    async def state(self) -> Database:
        """The state database, opened on first use."""
        async with self._opening:
            if self._state is None:
                self._state = await state_database(self._db.name).open(self._factory)
            return self._state

    async def _meta(self, key: str) -> Any:
        async def read(tx: Transaction) -> Any:
            return await read_meta(tx, key)

        return await (await self.state()).transaction("r", ["meta"], read)

    async def _device(self) -> Hlc:
        """This device's clock (its id made, and kept, on first use)."""

        async def made(tx: Transaction) -> Hlc:
            device = await read_meta(tx, "device")
            if not isinstance(device, str):
                device = uuid.uuid4().hex[:16]
                await write_meta(tx, "device", device)
            last = await read_meta(tx, "clock")
            return Hlc.parse(last) if isinstance(last, str) else Hlc(device)

        return await (await self.state()).transaction("rw", list(STATE_TABLES), made)

    async def configure(
        self, host: Host, server: str, database: str, user: str | None, password: str | None
    ) -> Config:
        """Check and keep the configuration; the password goes to the credential store.

        Returns the configuration as kept (the password's reference, never the password).
        """
        config: Config = {"server": check_server(server), "database": check_database(database)}
        if (user is None) != (password is None):
            raise ValidationError(
                "user: give both the user and the password, or neither", field="user"
            )
        if user is not None and password is not None:
            user, password = check_user(user), check_password(password)
        credentials = host.services.credentials
        old = await self._meta("config")
        old_ref = old.get("ref") if isinstance(old, dict) else None
        if user is not None and password is not None:
            config["user"] = user
            if isinstance(old_ref, str):
                try:
                    config["ref"] = await credentials.rotate(old_ref, password)
                except NotFoundError:
                    config["ref"] = await credentials.set(password)
            else:
                config["ref"] = await credentials.set(password)
        elif isinstance(old_ref, str):
            try:
                await credentials.delete(old_ref)
            except NotFoundError:
                pass

        moved = isinstance(old, dict) and (old.get("server"), old.get("database")) != (
            config["server"],
            config["database"],
        )

        fresh = not isinstance(old, dict) or moved
        seen = await current(self._db, self._clock()) if fresh else None

        async def save(tx: Transaction) -> None:
            await write_meta(tx, "config", config)
            if moved:  # what the state knows is of the other database
                await _forget_server(tx)
            if seen is not None:  # the state knows nothing a restore could have staled
                await acknowledge(state, seen, tx)

        state = await self.state()
        await state.transaction("rw", list(STATE_TABLES), save)
        return config

    async def paused(self) -> str | None:
        """Why sync is paused: ``"restore"`` after a backup restore, else ``None``."""
        found = await check(self._db, await self.state(), self._clock())
        return "restore" if found.paused else None

    async def _refuse_paused(self) -> None:
        if await self.paused() is not None:
            raise SyncPausedError(PAUSED_MESSAGE)

    async def resume(self, host: Host, mode: str) -> dict[str, Any]:
        """Go on after a restore: ``merge`` or ``replace`` (docs/sync.md); the answer.

        ``{resumed, mode, deleted?, push?}``: ``resumed`` is false when sync was not
        paused (nothing is done: another context, or an earlier click, decided already).
        ``merge`` forgets what the state knew of the server (as a lost state: the next
        sync pulls everything, merges, and pushes what the server lacks, deleting
        nothing there). ``replace`` deletes on the server every synced document the
        store does not hold, then pushes everything; the pause stays if it fails.
        """
        if mode not in RESUME_MODES:
            raise ValidationError('mode: must be "merge" or "replace"', field="mode")
        async with self._running:
            state = await self.state()
            found = await check(self._db, state, self._clock())
            if not found.paused:
                return {"resumed": False, "mode": mode}
            seen = seen_now(found.receipts, self._clock())  # what was read, nothing later
            out: dict[str, Any] = {"resumed": True, "mode": mode}
            if mode == "merge":

                async def forget(tx: Transaction) -> None:
                    await _forget_server(tx)
                    await acknowledge(state, seen, tx)

                await state.transaction("rw", list(STATE_TABLES), forget)
            else:
                couch = await self._couch(host)
                hlc = await self._device()
                replaced = await replace_server(self._db, state, couch, self.batch_docs)
                report = await push(
                    self._db, state, couch, hlc, self._clock(), batch_docs=self.batch_docs
                )
                await acknowledge(state, seen)
                out["deleted"] = replaced["deleted"]
                out["push"] = report.to_json()
        if self.live is not None:
            self.live.wake()
        return out

    async def _couch(self, host: Host) -> Couch:
        config = await self._meta("config")
        if not isinstance(config, dict):
            raise NotFoundError("sync: not configured (sync.configure first)", field="server")
        target = Target(check_server(config["server"]), check_database(config["database"]))
        authorization = None
        if isinstance(config.get("ref"), str) and isinstance(config.get("user"), str):
            password = await host.services.credentials.reveal(config["ref"])
            authorization = basic_auth(config["user"], password)
        return Couch(host.http, target, authorization, self.timeout)

    async def push(self, host: Host) -> dict[str, Any]:
        """One push (:func:`panelot.sync.push.push`); its report.

        A success clears the last failure of a loop or background sync.
        """
        report = await self._push(host, None, progress.COMMAND)
        await failure.clear(await self.state())
        return report

    async def _push(self, host: Host, rows: dict[str, str] | None, source: str) -> dict[str, Any]:
        """One push of the outbox ``rows`` (``None``: everything), reporting its progress."""
        async with self._running:
            couch = await self._couch(host)
            await self._refuse_paused()
            hlc = await self._device()
            state = await self.state()
            now = self._clock()
            steps = Progress(state, self._clock, source)
            try:
                report = await push(
                    self._db,
                    state,
                    couch,
                    hlc,
                    now,
                    rows,
                    batch_docs=self.batch_docs,
                    progress=steps,
                )
            finally:
                await steps.clear()
            return report.to_json()

    async def pull(self, host: Host, send: Send, client: str) -> dict[str, Any]:
        """One pull (:func:`panelot.sync.pull.pull`); its report.

        A success clears the last failure of a loop or background sync.
        """
        report = await self._pull(host, send, client, progress.COMMAND)
        await failure.clear(await self.state())
        return report

    async def _pull(self, host: Host, send: Send, client: str, source: str) -> dict[str, Any]:
        """One pull, reporting its progress as ``source``."""
        async with self._running:
            couch = await self._couch(host)
            await self._refuse_paused()
            hlc = await self._device()
            state = await self.state()
            budget = host.storage.budget
            steps = Progress(state, self._clock, source)
            try:
                report = await pull(
                    self._db,
                    state,
                    couch,
                    hlc,
                    self._clock(),
                    send,
                    client,
                    budget,
                    progress=steps,
                )
            finally:
                await steps.clear()
            return report.to_json()

    async def fetch(self, host: Host, attachment_id: Any) -> dict[str, Any]:
        """Bring one attachment's bytes from the server (:mod:`panelot.sync.demand`).

        Not under the push/pull lock: the writes are decided in their own transactions,
        so a pull running meanwhile (here or in another context) is no clash. Refused
        while sync is paused after a backup restore, as push and pull are.
        """
        couch = await self._couch(host)
        await self._refuse_paused()
        state = await self.state()
        return await fetch_attachment(self._db, state, couch, attachment_id, host.storage.budget)

    async def locate(self, attachment_id: Any) -> dict[str, Any]:
        """Where an attachment's bytes are: ``{attachmentId, held, onServer, size?, mime?}``."""
        configured = isinstance(await self._meta("config"), dict)
        return await locate(self._db, await self.state() if configured else None, attachment_id)

    async def now(self, host: Host, send: Send, client: str) -> dict[str, Any]:
        """``sync.now``: one pull, then one push; ``{pull, push}``.

        A success clears the last failure of a loop or background sync; a failure of a
        background sync (:attr:`context`) is kept as the last failure
        (:mod:`panelot.sync.failure`), for every context to see.
        """
        source = self.context
        try:
            pulled = await self._pull(host, send, client, source)
            pushed = await self._push(host, None, source)
        except SyncPausedError:
            raise  # the pause is shown as such, not as a failure
        except Exception as error:
            if source == progress.BACKGROUND:
                await self._keep_failure(error)
            raise
        await failure.clear(await self.state())
        return {"pull": pulled, "push": pushed}

    async def _keep_failure(self, error: Exception) -> None:
        """Keep a background sync's failure (a failure to keep it is logged, not raised)."""
        try:
            state = await self.state()
            await failure.record(state, failure.BACKGROUND, error, self._clock(), None)
        except Exception:
            log.exception("sync: keeping the background sync's failure failed")

    async def test(self, host: Host) -> dict[str, Any]:
        """Check the saved configuration against the server, writing nothing.

        ``GET /db`` with the saved credentials: ``{ok: True, server, database, user?,
        documents}`` when the database answers; otherwise a ``NetworkError`` naming what is
        wrong (``field`` ``password``: a 401 or 403; ``database``: no such database; none:
        the server could not be reached or answered something else), never the password.
        """
        couch = await self._couch(host)
        info = await couch.info()
        config = await self._meta("config")
        out: dict[str, Any] = {"ok": True, "server": couch.target.server}
        out["database"] = couch.target.database
        if isinstance(config, dict) and isinstance(config.get("user"), str):
            out["user"] = config["user"]
        count = info.get("doc_count")
        out["documents"] = count if isinstance(count, int) else None
        return out

    async def forget(self, host: Host) -> dict[str, Any]:
        """Forget the configuration and delete its password from the credential store.

        What the state knows of the server's documents and the checkpoints go too: the
        next configuration may name another database, which a stale state would make a
        push skip; a pause after a restore goes with them. The device's id and clock
        stay. Syncing with the same database again costs one full comparison (as a lost
        state does), never data. ``{forgotten}``:
        whether there was a configuration.
        """
        await self.stop()  # no loop syncs with what is forgotten
        async with self._running:  # not under a push or pull that reads the config
            config = await self._meta("config")
            ref = config.get("ref") if isinstance(config, dict) else None
            if isinstance(ref, str):
                try:
                    await host.services.credentials.delete(ref)
                except NotFoundError:
                    pass

            seen = await current(self._db, self._clock())

            async def drop(tx: Transaction) -> None:
                await tx.table("meta").delete("config")
                await _forget_server(tx)
                await acknowledge(state, seen, tx)  # nothing is left for a restore to stale

            state = await self.state()
            await state.transaction("rw", list(STATE_TABLES), drop)
            return {"forgotten": isinstance(config, dict)}

    async def start(self, host: Host, send: Send, client: str) -> dict[str, Any]:
        """Start the continuous loop (idempotent); the status.

        ``NotFoundError`` when sync is not configured. In a page the loop syncs once it
        holds the profile's lock (the host's Web Locks, ``search_lock``, under
        :func:`~panelot.sync.live.lock_name`).
        """
        await self._couch(host)  # configured, and the password is there
        await self._refuse_paused()
        if self.live is None or not self.live.running:
            state = await self.state()

            async def push_rows(rows: dict[str, str]) -> dict[str, Any]:
                return await self._push(host, rows, progress.LOOP)

            async def pull_all() -> dict[str, Any]:
                return await self._pull(host, send, client, progress.LOOP)

            async def outcome(error: Exception | None, next_try: int | None) -> None:
                if error is None:
                    await failure.clear(state)
                else:
                    await failure.record(state, failure.LOOP, error, self._clock(), next_try)

            async def wait(seconds: float) -> bool:
                couch = await self._couch(host)
                last = await self._meta("pull")
                since = last.get("since", 0) if isinstance(last, dict) else 0
                return await wait_changes(couch, since, seconds)

            self.live = Live(
                self._db,
                state,
                push=push_rows,
                pull=pull_all,
                wait=wait,
                paused=self._is_paused,
                outcome=outcome,
                clock=self._clock,
                sleep=self.sleep,
                locks=host.search_lock,
                poll_seconds=self.poll_seconds,
                debounce=self.debounce,
            )
            self.live.start()
        return await self.status()

    async def _is_paused(self) -> bool:
        return await self.paused() is not None

    async def stop(self) -> dict[str, Any]:
        """Stop the continuous loop (waiting until it has stopped); the status."""
        live, self.live = self.live, None
        if live is not None:
            await live.stop()
        return await self.status()

    async def status(self) -> dict[str, Any]:
        """The configuration, the state's figures and the loop's.

        ``{configured, server?, database?, user?, device?, documents, lastPush, lastPull,
        running, syncing, waiting, wide, lastError, nextTry, failure, progress, paused}``:
        ``waiting`` is the outbox's size (the changes waiting to be sent), ``wide``
        whether it holds :data:`~panelot.sync.outbox.WIDE` (the next push compares
        everything); ``lastError`` and ``nextTry`` are this context's loop's;
        ``failure`` the last failure of any context's loop or background sync
        (:mod:`panelot.sync.failure`), ``progress`` the sync in flight in any context
        (:mod:`panelot.sync.progress`; ``None`` when none, or a stale row);
        ``paused``: ``"restore"`` after a backup restore, else ``None``. It writes
        nothing (but the pause's check moving its window, rarely).
        """
        state = await self.state()
        now = self._clock()

        async def read(tx: Transaction) -> dict[str, Any]:
            config = await read_meta(tx, "config")
            out: dict[str, Any] = {"configured": isinstance(config, dict)}
            if isinstance(config, dict):
                out.update({k: config[k] for k in ("server", "database", "user") if k in config})
            out["device"] = await read_meta(tx, "device")
            out["documents"] = await tx.table("docs").count()
            out["lastPush"] = await read_meta(tx, "push")
            out["lastPull"] = await read_meta(tx, "pull")
            out["wide"] = await tx.table("outbox").get(WIDE) is not None
            out["failure"] = failure.shown(await read_meta(tx, failure.KEY))
            out["progress"] = progress.shown(await read_meta(tx, progress.KEY), now)
            return out

        out = await state.transaction("r", list(STATE_TABLES), read)
        live = self.live
        out["running"] = live is not None and live.running
        out["syncing"] = live is not None and live.syncing
        out["waiting"] = await size(state)
        out["lastError"] = None if live is None else live.last_error
        out["nextTry"] = None if live is None else live.next_try
        out["paused"] = await self.paused()
        return out

    def close(self) -> None:
        """Stop the loop, close the state database (if it was opened)."""
        if self.live is not None:
            self.live.close()
            self.live = None
        if self._state is not None:
            self._state.close()
            self._state = None


async def _forget_server(tx: Transaction) -> None:
    """Drop what the state knows of a server's database: its documents and checkpoints.

    The outbox then holds only :data:`~panelot.sync.outbox.WIDE`: the next push, the
    continuous loop's too, compares everything with the (new) database. The last
    failure goes too (it was the old database's).
    """
    await tx.table("docs").clear()
    for key in ("push", "pull", "sent", failure.KEY):
        await tx.table("meta").delete(key)
    await tx.table("outbox").clear()
    await tx.table("outbox").put({"id": WIDE, "n": uuid.uuid4().hex})


@runtime_checkable
class Syncing(Protocol):
    """An env that has a sync section (the store is one)."""

    @property
    def sync(self) -> Syncer | None:
        """Its sync section (``None``: built without one)."""
        ...


def syncer_of(env: object) -> Syncer:
    """The sync section of ``env``; ``NotFoundError`` when it has none."""
    syncer = env.sync if isinstance(env, Syncing) else None
    if syncer is None:
        raise NotFoundError("sync: this store was built without a sync section")
    return syncer
