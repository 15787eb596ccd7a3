"""A restore from a file, end to end: read and check it, send ``backup.restore``, settle.

:func:`restore_file` is what ``PanelotStore.restore_backup`` (and so
``panelot.backup.restore`` in a page) runs: it reads and checks the whole file
(:func:`~panelot.backup.files.read_backup`; nothing is written if any of it is refused),
stages it under its SHA-256 and sends the ``backup.restore`` command
(:mod:`panelot.api.backup`) naming it, then applies the settings section once the
database transaction has committed (:mod:`panelot.backup.section`).
:func:`finish_interrupted` applies the section of a restore that crashed between its
commit and its settings, when a store opens.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from panelot.backup.files import read_backup
from panelot.backup.section import apply_pending, drop_pending, missing_credentials
from panelot.bus import Env
from panelot.bus.receipts import receipt_id
from panelot.codec import id_field
from panelot.host import Services
from panelot.idb import Database
from panelot.idb.errors import PanelotError
from panelot.idb.transfer import ImportProgress

__all__ = ["finish_interrupted", "restore_file"]

Send = Callable[[Any], Awaitable[dict[str, Any]]]
"""The bus's ``send``: a command in, its terminal envelope out."""


async def finish_interrupted(services: Services, db: Database, now: int) -> None:
    """Apply the settings of a restore that committed but crashed before its settings."""
    await apply_pending(services, db, now)


async def restore_file(
    env: Env,
    send: Send,
    file: Any,
    *,
    client_id: str,
    submission_id: str | None = None,
    settings: bool = True,
    progress: Callable[[ImportProgress], Any] | None = None,
    chunk_size_bytes: int = 1024 * 1024,
) -> dict[str, Any]:
    """Replace everything with the backup in ``file``: the ``backup.restore`` envelope.

    ``file`` is a Blob (JS or memory), bytes, or a ``ByteSource``. The envelope is
    ``{status, response}`` or ``{status, error}``; a completed one also says whether
    settings were applied and which credentials to enter again (``settingsApplied``,
    ``missingCredentials``). The caller runs one restore at a time.
    """
    submission = uuid.uuid4().hex if submission_id is None else submission_id
    try:
        id_field(client_id, "clientId")
        id_field(submission, "submissionId")
        staged = await read_backup(env.db, file, progress, chunk_size_bytes)
    except PanelotError as exc:
        return {"status": "failed", "error": exc.to_json()}
    staged.receipt_id = receipt_id(client_id, submission)
    digest = staged.plan.sha256
    env.inputs.stage(digest, staged)
    command = {
        "type": "backup.restore",
        "clientId": client_id,
        "submissionId": submission,
        "payload": {"sha256": digest, "size": staged.plan.size, "settings": settings},
    }
    try:
        envelope = await send(command)
    finally:
        env.inputs.discard(digest)
    return await _settle(env, envelope, staged.receipt_id)


async def _settle(env: Env, envelope: dict[str, Any], receipt: str) -> dict[str, Any]:
    """After a restore's transaction: its settings, and what the envelope says of them.

    The database has committed (or not) by now, so a failure here never turns a
    completed restore into a failed one: it is reported beside it.
    """
    services = env.host.services
    try:
        if envelope["status"] != "completed":  # nothing committed: its settings go
            await drop_pending(services, receipt)
            return envelope
        applied = await apply_pending(services, env.db, env.clock(), owner=receipt)
        missing = await missing_credentials(services)
    except PanelotError as exc:
        applied, missing = False, []
        if envelope["status"] == "completed":
            envelope["settingsError"] = exc.to_json()
    if envelope["status"] == "completed":
        envelope["settingsApplied"] = applied
        envelope["missingCredentials"] = missing
    return envelope
