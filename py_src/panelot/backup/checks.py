"""What a restore checks in every ``panelot_v1`` record before anything is written.

Each table's rows go through the reader its section declares for its record
(:data:`READERS`, a map from table to reader): threads and nodes through the tree's
(each record strictly, then each thread's tree once every row is read: parents inside
it, no cycles, a leaf that reaches a root, :class:`TreeCheck`), attachments, runs (their
environment snapshot verified against its digest), approvals and interactions through
their sections' dataclasses (:mod:`panelot.attachments.stored`,
:mod:`panelot.runs.stored`), skills, memories, plugins and plugin assets through the
library's readers, and receipts through the bus's. A problem raises
:class:`~panelot.idb.errors.ValidationError` naming the table, the row and the field
(``nodes[17].payload.content``). Records are kept exactly as the file has them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from panelot.attachments.stored import attachment_from_record
from panelot.bus.receipts import receipt_from_record
from panelot.codec import invalid
from panelot.idb.errors import PanelotError, ValidationError
from panelot.library.memories import memory_from_record
from panelot.library.plugin_assets import asset_from_record
from panelot.library.plugins import plugin_from_record
from panelot.library.skills import skill_from_record
from panelot.runs.stored import approval_from_record, interaction_from_record, run_from_record
from panelot.tree.records import ThreadMeta, check_thread_bounds, node_from_wire, thread_from_wire
from panelot.tree.transfer import tree_problems

__all__ = ["READERS", "Reader", "TreeCheck", "check_row"]

Reader = Callable[[Any, str], Any]
"""``reader(value, where)``: the record read (a dataclass), or an error naming ``where``."""
_MAX_PROBLEMS = 20


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise invalid(where, "must be an object")
    return value


def _thread(value: Any, where: str) -> ThreadMeta:
    thread = thread_from_wire(value, where)
    check_thread_bounds(value, where)
    return thread


def _named(read: Callable[[Any], Any]) -> Reader:
    """A library reader (which names its own path) as a reader naming the row."""

    def reader(value: Any, where: str) -> Any:
        try:
            return read(value)
        except PanelotError as exc:
            raise invalid(where, exc.message) from None

    return reader


READERS: dict[str, Reader] = {
    "threads": _thread,
    "nodes": node_from_wire,
    "attachments": attachment_from_record,
    "skills": _named(skill_from_record),
    "memories": _named(memory_from_record),
    "runs": run_from_record,
    "commandReceipts": receipt_from_record,
    "approvals": approval_from_record,
    "interactions": interaction_from_record,
    "plugins": _named(plugin_from_record),
    "pluginAssets": _named(asset_from_record),
}
"""The reader of each ``panelot_v1`` table's records: the section's own, which raises a
ValidationError (or a run snapshot's error) naming the field under the row's place."""


def check_row(table: str, value: Any, key: Any, where: str) -> Any:
    """Check one record of ``table`` (an ``ImportOptions.check_row``); return it unchanged."""
    read = READERS.get(table)
    if read is None:
        raise invalid(where, f"{table!r} is not a table of panelot_v1")
    read(value, where)
    return value


class TreeCheck:
    """The trees of all threads of a restore, checked once every row has been read."""

    def __init__(self) -> None:
        self.threads: dict[str, str | None] = {}
        """Each thread's ``leafId``."""
        self.nodes: dict[str, list[dict[str, Any]]] = {}
        self.rows: dict[str, str] = {}
        """Each node's row in the file, by ``repr`` of its id (``nodes[5]``)."""

    def add(self, table: str, value: Any, where: str = "") -> None:
        """Note a checked ``threads`` or ``nodes`` record (``where``: its row in the file)."""
        if table == "threads":
            self.threads[value["id"]] = value.get("leafId")
        elif table == "nodes":
            self.nodes.setdefault(value["threadId"], []).append(value)
            self.rows[repr(value["id"])] = where or f"nodes[{value['id']!r}]"

    def check(self) -> None:
        """Every node's thread is in the backup and every thread's tree is sound.

        The error names the row at fault when one node is (``nodes[5].parentId``: a
        parent outside its thread, a cycle; ``nodes[5].seq``: a seq taken twice).
        """
        problems: list[str] = []
        fields: list[str] = []
        for thread_id, nodes in self.nodes.items():
            if thread_id not in self.threads:
                problems.append(
                    f"nodes: {len(nodes)} nodes of thread {thread_id!r}, not in threads"
                )
                fields.append("nodes")
        for thread_id, leaf in self.threads.items():
            nodes = self.nodes.get(thread_id, [])
            taken: set[Any] = set()
            twice: list[str] = []
            for node in nodes:
                if node["seq"] in taken:
                    twice.append(node["id"])
                taken.add(node["seq"])
            if twice:
                problems.append(f"threads[{thread_id!r}].nodes: a seq appears twice")
                fields.append(f"{self.rows[repr(twice[0])]}.seq")
            found = tree_problems(thread_id, leaf, nodes, f"threads[{thread_id!r}].")
            problems += found
            fields += [self._row_of(problem) for problem in found]
            if len(problems) >= _MAX_PROBLEMS:
                break
        if problems:
            shown = problems[:_MAX_PROBLEMS]
            more = len(problems) - len(shown)
            message = "; ".join(shown) + (f"; and {more} more" if more > 0 else "")
            raise ValidationError(message, field=fields[0])

    def _row_of(self, problem: str) -> str:
        """The field a tree problem names: a node's ``parentId`` when one node is at fault."""
        match = _NODE_PROBLEM.match(problem)
        if match is None or match.group(1) not in self.rows:
            return problem.split(":")[0]
        return f"{self.rows[match.group(1)]}.parentId"


_NODE_PROBLEM = re.compile(r"^threads\[.*?\]\.nodes: ('(?:[^'\\]|\\.)*') ")
