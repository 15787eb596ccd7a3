"""Commands and query of sync with the user's CouchDB-compatible server (:mod:`panelot.sync`).

Commands (payload → response)::

    sync.configure {server, database, user?, password?}
        → {server, database, user?}        (the password goes to the encrypted
                                            credential store; it is never echoed)
    sync.push      {} → {pushed, deleted, unchanged, batches,
                         checkpoint: {id: "_local/<replication id>", seq, at, written}}
    sync.pull      {} → {pulled, written, refused: [{id, reason}], deleted, onServer,
                         checkpoint: {id: "_local/<replication id>", since, at}}
                         (a refused record is not written; a thread deleted on the
                         server runs this store's own thread.delete, through the bus)
    sync.now       {} → {pull: <sync.pull's report>, push: <sync.push's report>}
    sync.forget    {} → {forgotten}        (continuous sync stops; the configuration,
                                            its password in the credential store and
                                            what the state knew of the server's
                                            documents are deleted)
    sync.start     {} → <sync.status>     (starts continuous sync in this store:
                                            pushes from the change feed's outbox, a
                                            long-poll pulls; idempotent)
    sync.stop      {} → <sync.status>     (stops it; a push under way is cut short)
    sync.resume    {mode: "merge" | "replace"}
                      → {resumed, mode, deleted?, push?}
                                           (after a backup restore sync is paused:
                                            push, pull, now and start refuse with a
                                            SyncPausedError until this; "merge": the
                                            next sync pulls everything and merges,
                                            deleting nothing on the server; "replace":
                                            the server's documents the store lacks are
                                            deleted there, then everything is pushed;
                                            not paused: resumed false, nothing done)
    sync.fetch     {attachmentId}
                      → {attachmentId, threadId, kind, mime, size, fetched}
                                           (an attachment this device does not hold
                                            but the server does: pulled without its
                                            bytes, or evicted here; its bytes are
                                            fetched, checked against the server's
                                            MD5 digest and written within the
                                            attachment budget, evicting the oldest
                                            of other threads as attachment.put does;
                                            fetched false: it was here already.
                                            NotFoundError: not configured, or no such
                                            attachment on the server; SyncDigestError:
                                            the bytes are not the digest, nothing
                                            written; QuotaExceededError: larger than
                                            the budget; NetworkError)

Query::

    sync.status {} → {configured, server?, database?, user?, device, documents, lastPush,
                      lastPull: {id, since, at, refused} | null,
                      running, syncing, waiting, wide, lastError, nextTry,
                      failure: {source, name, message, field?, at, nextTry} | null,
                      progress: {phase, done, total, at, source} | null,
                      paused: "restore" | null}
    sync.test   {} → {ok: true, server, database, user?, documents}
                     (``GET /db`` with the saved configuration, writing nothing; a
                     NetworkError on ``password`` (401/403) or ``database`` (404) or
                     none (unreachable) otherwise)
    sync.attachment {attachmentId} → {attachmentId, held, onServer, size?, mime?}
                     (whether the bytes are here, or only on the sync server, which
                     sync.fetch brings; size and mime are then the server's)

Each command does its work in its ``prepare`` step, outside the receipt's transaction
(HTTP and another database, which an IndexedDB transaction must never wait on); the
transaction then writes the receipt with the response ``prepare`` handed over. See
docs/sync.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from panelot.bus import Call, Env, Handler, Query
from panelot.idb import Transaction
from panelot.idb.errors import NotFoundError
from panelot.sync.pull import Send
from panelot.sync.section import syncer_of

__all__ = ["COMMANDS", "QUERIES"]


async def _handed_over(tx: Transaction, call: Call[Any]) -> Any:
    """The response its ``prepare`` made: the transaction writes only the receipt."""
    return call.prepared


@dataclass(frozen=True, slots=True)
class ConfigureArgs:
    """``sync.configure``: the password is kept by the credential store, never echoed."""

    server: str
    database: str
    user: str | None = None
    password: str | None = None

    def __repr__(self) -> str:  # the password stays out of every repr
        return f"ConfigureArgs(server={self.server!r}, database={self.database!r})"


@dataclass(frozen=True, slots=True)
class ResumeArgs:
    """``sync.resume``: ``mode`` is ``"merge"`` or ``"replace"``."""

    mode: str


@dataclass(frozen=True, slots=True)
class AttachmentArgs:
    """``sync.fetch`` and ``sync.attachment``: one attachment, by id."""

    attachment_id: str


@dataclass(frozen=True, slots=True)
class NoArgs:
    """A command or query that takes nothing."""


async def _configure(env: Env, p: ConfigureArgs) -> dict[str, Any]:
    config = await syncer_of(env).configure(env.host, p.server, p.database, p.user, p.password)
    return {k: config[k] for k in ("server", "database", "user") if k in config}


async def _push(env: Env, p: NoArgs) -> dict[str, Any]:
    return await syncer_of(env).push(env.host)


@runtime_checkable
class _Sending(Protocol):
    """An env that takes commands as a client of its own (the store)."""

    async def send(self, command: Any) -> dict[str, Any]:
        """Run a bus command; its envelope."""
        ...


async def _send_of(env: Env) -> Send:
    if not isinstance(env, _Sending):
        raise NotFoundError("sync: this store cannot send itself commands")
    return env.send


async def _pull(env: Env, p: NoArgs) -> dict[str, Any]:
    client = getattr(env, "client_id", None)
    send = await _send_of(env)
    return await syncer_of(env).pull(env.host, send, client if isinstance(client, str) else "sync")


async def _now(env: Env, p: NoArgs) -> dict[str, Any]:
    client = getattr(env, "client_id", None)
    send = await _send_of(env)
    return await syncer_of(env).now(env.host, send, client if isinstance(client, str) else "sync")


async def _forget(env: Env, p: NoArgs) -> dict[str, Any]:
    return await syncer_of(env).forget(env.host)


async def _test(env: Env, a: NoArgs) -> dict[str, Any]:
    return await syncer_of(env).test(env.host)


async def _start(env: Env, p: NoArgs) -> dict[str, Any]:
    client = getattr(env, "client_id", None)
    send = await _send_of(env)
    return await syncer_of(env).start(env.host, send, client if isinstance(client, str) else "sync")


async def _resume(env: Env, p: ResumeArgs) -> dict[str, Any]:
    return await syncer_of(env).resume(env.host, p.mode)


async def _fetch(env: Env, p: AttachmentArgs) -> dict[str, Any]:
    return await syncer_of(env).fetch(env.host, p.attachment_id)


async def _attachment(env: Env, a: AttachmentArgs) -> dict[str, Any]:
    return await syncer_of(env).locate(a.attachment_id)


async def _stop(env: Env, p: NoArgs) -> dict[str, Any]:
    return await syncer_of(env).stop()


async def _status(env: Env, a: NoArgs) -> dict[str, Any]:
    return await syncer_of(env).status()


COMMANDS: dict[str, Handler[Any]] = {
    "sync.configure": Handler(
        payload=ConfigureArgs, tables=(), run=_handed_over, prepare=_configure
    ),
    "sync.push": Handler(payload=NoArgs, tables=(), run=_handed_over, prepare=_push),
    "sync.pull": Handler(payload=NoArgs, tables=(), run=_handed_over, prepare=_pull),
    "sync.now": Handler(payload=NoArgs, tables=(), run=_handed_over, prepare=_now),
    "sync.forget": Handler(payload=NoArgs, tables=(), run=_handed_over, prepare=_forget),
    "sync.start": Handler(payload=NoArgs, tables=(), run=_handed_over, prepare=_start),
    "sync.stop": Handler(payload=NoArgs, tables=(), run=_handed_over, prepare=_stop),
    "sync.resume": Handler(payload=ResumeArgs, tables=(), run=_handed_over, prepare=_resume),
    "sync.fetch": Handler(payload=AttachmentArgs, tables=(), run=_handed_over, prepare=_fetch),
}
"""The sync commands."""

QUERIES: dict[str, Query[Any]] = {
    "sync.status": Query(args=NoArgs, run=_status),
    "sync.test": Query(args=NoArgs, run=_test),
    "sync.attachment": Query(args=AttachmentArgs, run=_attachment),
}
"""The sync queries."""
