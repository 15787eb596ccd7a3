"""What a restore checks in every ``panelot_v1`` record before anything is written.

Each table's rows go through the checks the domain applies to its own records:
threads and nodes through the thread import's pre-checks (each record strictly, then
each thread's tree: parents inside it, no cycles, a leaf that reaches a root), runs
with their environment snapshot verified against its digest, skills, memories, plugins
and plugin assets through their record readers, and the rest (attachments, receipts,
approvals, interactions) against their record shapes. A problem raises
:class:`~panelot.idb.errors.ValidationError` naming the table, the row and the field
(``nodes[17].payload.content``). Records are kept exactly as the file has them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from panelot.attachments.records import KINDS, PROVENANCES, TRUST_LEVELS
from panelot.bus.receipts import receipt_id
from panelot.codec import id_field
from panelot.idb.blobs import blob_size, is_blob
from panelot.idb.errors import PanelotError, ValidationError
from panelot.library.memories import memory_from_record
from panelot.library.plugin_assets import asset_from_record
from panelot.library.plugins import plugin_from_record
from panelot.library.skills import skill_from_record
from panelot.runs.records import RUN_STATES
from panelot.runs.snapshot import verify_snapshot
from panelot.tree.records import check_thread_bounds, node_from_wire, thread_from_wire
from panelot.tree.transfer import tree_problems

__all__ = ["CHECKS", "TreeCheck", "check_row"]

_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_MAX_PROBLEMS = 20


def _fail(where: str, message: str) -> ValidationError:
    return ValidationError(f"{where}: {message}", field=where)


def _int(record: dict[str, Any], name: str, where: str, required: bool = True) -> None:
    value = record.get(name)
    if value is None and not required:
        return
    if type(value) is not int or value < 0:
        raise _fail(f"{where}.{name}", "must be a non-negative integer")


def _str(record: dict[str, Any], name: str, where: str, required: bool = True) -> None:
    value = record.get(name)
    if value is None and not required:
        return
    if not isinstance(value, str):
        raise _fail(f"{where}.{name}", "must be a string")


def _ids(record: dict[str, Any], names: tuple[str, ...], where: str) -> None:
    for name in names:
        id_field(record.get(name), f"{where}.{name}")


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(where, "must be an object")
    return value


def _thread(value: Any, where: str) -> None:
    thread_from_wire(value, where)
    check_thread_bounds(value, where)


def _node(value: Any, where: str) -> None:
    node_from_wire(value, where)


def _attachment(value: Any, where: str) -> None:
    record = _object(value, where)
    _ids(record, ("id", "threadId"), where)
    _int(record, "createdAt", where)
    if record.get("kind") not in KINDS:
        raise _fail(f"{where}.kind", f"must be one of {list(KINDS)}")
    _str(record, "mime", where)
    _int(record, "size", where)
    data = record.get("bytes")
    if data is None:
        if record.get("deleting") is not True:
            raise _fail(f"{where}.bytes", "must be a Blob (only a record being deleted has none)")
    elif not is_blob(data):
        raise _fail(f"{where}.bytes", "must be a Blob")
    elif blob_size(data) != record["size"]:
        raise _fail(f"{where}.size", f"is {record['size']}, the Blob has {blob_size(data)} bytes")
    for name, allowed in (("trust", TRUST_LEVELS), ("provenance", PROVENANCES)):
        if record.get(name) is not None and record[name] not in allowed:
            raise _fail(f"{where}.{name}", f"must be one of {list(allowed)}")
    for name in ("refs", "meta"):
        if record.get(name) is not None:
            _object(record[name], f"{where}.{name}")


def _run(value: Any, where: str) -> None:
    record = _object(value, where)
    _ids(record, ("id", "threadId"), where)
    _int(record, "createdAt", where)
    _int(record, "updatedAt", where)
    if record.get("state") not in RUN_STATES:
        raise _fail(f"{where}.state", f"must be one of {list(RUN_STATES)}")
    _object(record.get("input"), f"{where}.input")
    verify_snapshot(record.get("snapshot"), f"{where}.snapshot")


def _receipt(value: Any, where: str) -> None:
    record = _object(value, where)
    _ids(record, ("clientId", "submissionId"), where)
    if record.get("id") != receipt_id(record["clientId"], record["submissionId"]):
        raise _fail(f"{where}.id", "is not the receipt id of its clientId and submissionId")
    _str(record, "commandType", where)
    _str(record, "status", where)
    _int(record, "createdAt", where)
    _int(record, "expiresAt", where)
    fp = record.get("requestFingerprint")
    if not isinstance(fp, str) or not _HEX64.match(fp):
        raise _fail(f"{where}.requestFingerprint", "must be a SHA-256 in hex")


def _waiting(value: Any, where: str) -> None:
    record = _object(value, where)
    _ids(record, ("id", "threadId", "runId"), where)
    if record.get("status") not in ("pending", "resolved"):
        raise _fail(f"{where}.status", "must be 'pending' or 'resolved'")
    _int(record, "requestedAt", where)
    _int(record, "resolvedAt", where, required=False)


def _reader(read: Callable[[Any], Any]) -> Callable[[Any, str], None]:
    def check(value: Any, where: str) -> None:
        try:
            read(value)
        except PanelotError as exc:
            raise _fail(where, exc.message) from None

    return check


CHECKS: dict[str, Callable[[Any, str], None]] = {
    "threads": _thread,
    "nodes": _node,
    "attachments": _attachment,
    "skills": _reader(skill_from_record),
    "memories": _reader(memory_from_record),
    "runs": _run,
    "commandReceipts": _receipt,
    "approvals": _waiting,
    "interactions": _waiting,
    "plugins": _reader(plugin_from_record),
    "pluginAssets": _reader(asset_from_record),
}
"""The check of each ``panelot_v1`` table's records."""


def check_row(table: str, value: Any, key: Any, where: str) -> Any:
    """Check one record of ``table`` (an ``ImportOptions.check_row``); return it unchanged."""
    check = CHECKS.get(table)
    if check is None:
        raise _fail(where, f"{table!r} is not a table of panelot_v1")
    check(value, where)
    return value


class TreeCheck:
    """The trees of all threads of a restore, checked once every row has been read."""

    def __init__(self) -> None:
        self.threads: dict[str, str | None] = {}
        """Each thread's ``leafId``."""
        self.nodes: dict[str, list[dict[str, Any]]] = {}

    def add(self, table: str, value: Any) -> None:
        """Note a checked ``threads`` or ``nodes`` record."""
        if table == "threads":
            self.threads[value["id"]] = value.get("leafId")
        elif table == "nodes":
            self.nodes.setdefault(value["threadId"], []).append(value)

    def check(self) -> None:
        """Every node's thread is in the backup and every thread's tree is sound."""
        problems: list[str] = []
        for thread_id, nodes in self.nodes.items():
            if thread_id not in self.threads:
                problems.append(
                    f"nodes: {len(nodes)} nodes of thread {thread_id!r}, not in threads"
                )
        for thread_id, leaf in self.threads.items():
            nodes = self.nodes.get(thread_id, [])
            seqs = [n["seq"] for n in nodes]
            if len(set(seqs)) != len(seqs):
                problems.append(f"threads[{thread_id!r}].nodes: a seq appears twice")
            problems += tree_problems(thread_id, leaf, nodes, f"threads[{thread_id!r}].")
            if len(problems) >= _MAX_PROBLEMS:
                break
        if problems:
            shown = problems[:_MAX_PROBLEMS]
            more = len(problems) - len(shown)
            message = "; ".join(shown) + (f"; and {more} more" if more > 0 else "")
            field = shown[0].split(":")[0]
            raise ValidationError(message, field=field)
