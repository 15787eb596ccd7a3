"""How the debugging console shows values: verbatim text, tables, thread trees, masked secrets.

Pure functions and ``str``/``list`` subclasses, no store: :mod:`panelot.console.helpers`
builds its results with them, and :mod:`panelot.console.session` prints them.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

__all__ = ["Rows", "Text", "format_time", "mask_secrets", "render_tree"]


class Text(str):
    """A string the console prints verbatim (no quotes, real newlines)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return str(self)


class Rows(list[dict[str, Any]]):
    """A list of records that prints as an aligned table of ``columns``."""

    def __init__(self, rows: list[dict[str, Any]], columns: list[str]) -> None:
        super().__init__(rows)
        self.columns = columns

    def __repr__(self) -> str:
        if not self:
            return "(none)"
        cells = [[_cell(row.get(col)) for col in self.columns] for row in self]
        widths = [
            max(len(col), *(len(line[i]) for line in cells)) for i, col in enumerate(self.columns)
        ]
        lines = ["  ".join(col.ljust(w) for col, w in zip(self.columns, widths, strict=True))]
        lines.append("  ".join("-" * w for w in widths))
        lines += [
            "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) for line in cells
        ]
        return "\n".join(lines)


def _cell(value: Any, limit: int = 40) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else ""
    text = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
    text = text.replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def format_time(ms: Any) -> str:
    """A time in milliseconds since the epoch as ``YYYY-MM-DD HH:MM:SS`` (UTC), else ""."""
    if not isinstance(ms, int | float):
        return ""
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S")


def _summary(node: dict[str, Any], limit: int = 48) -> str:
    payload = node.get("payload") or {}
    kind = node.get("type")
    if kind == "tool_call":
        text = f"{payload.get('toolName')}({_cell(payload.get('params'), limit)})"
    elif kind == "tool_result":
        text = f"ok={payload.get('ok')} " + _blocks_text(payload.get("contentForLlm"))
    elif kind == "system_notice":
        text = str(payload.get("text", ""))
    else:
        text = _blocks_text(payload.get("content"))
    text = " ".join(text.split())
    return json.dumps(text if len(text) <= limit else text[: limit - 1] + "…", ensure_ascii=False)


def _blocks_text(blocks: Any) -> str:
    if not isinstance(blocks, list):
        return ""
    parts = []
    for block in blocks:
        if isinstance(block, dict):
            if block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            else:
                parts.append(
                    f"[{block.get('type')}: {block.get('name') or block.get('attachmentId')}]"
                )
    return " ".join(parts)


def render_tree(nodes: list[dict[str, Any]], leaf_id: str | None) -> str:
    """ASCII tree of a thread's nodes: seq, type, text, tombstones (x), path (*) and leaf."""
    by_id = {n["id"]: n for n in nodes}
    kids: dict[str | None, list[dict[str, Any]]] = {}
    for node in nodes:
        parent = node.get("parentId")
        kids.setdefault(parent if parent in by_id else None, []).append(node)
    for group in kids.values():
        group.sort(key=lambda n: n["seq"])
    path: set[str] = set()
    cursor = leaf_id
    while cursor is not None and cursor in by_id and cursor not in path:
        path.add(cursor)
        cursor = by_id[cursor].get("parentId")
    lines: list[str] = []

    def walk(node: dict[str, Any], prefix: str, last: bool, top: bool) -> None:
        mark = "*" if node["id"] in path else " "
        dead = " x deleted" if (node.get("payload") or {}).get("deleted") else ""
        leaf = "   <- leaf" if node["id"] == leaf_id else ""
        branch = "" if top else ("└─ " if last else "├─ ")
        lines.append(
            f"{mark} {prefix}{branch}#{node['seq']} {node['type']} {_summary(node)}"
            f"  [{node['id'][:8]}]{dead}{leaf}"
        )
        children = kids.get(node["id"], [])
        inner = prefix if top else prefix + ("   " if last else "│  ")
        for i, child in enumerate(children):
            walk(child, inner, i == len(children) - 1, False)

    roots = kids.get(None, [])
    for root in roots:
        walk(root, "", True, True)
    return "\n".join(lines) if lines else "(empty thread)"


_SECRET_NAME = re.compile(r"(secret|api_?key|password|token|authorization)$", re.I)


def mask_secrets(value: Any) -> Any:
    """A copy of ``value`` with every string under a secret-looking key masked."""
    if isinstance(value, dict):
        return {
            k: (
                "••••"
                if isinstance(v, str) and v and _SECRET_NAME.search(str(k))
                else mask_secrets(v)
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [mask_secrets(v) for v in value]
    return value
