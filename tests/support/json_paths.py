"""Paths into parsed JSON, for tests that mutate a document at a drawn place."""

from __future__ import annotations

from typing import Any


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path in ``value`` (keys and list indexes), the root's ``()`` first."""
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += paths(v, (*prefix, i))
    return out


def set_at(root: Any, path: tuple[Any, ...], new: Any) -> Any:
    """``root`` with the value at ``path`` replaced by ``new`` (in place; the root if empty)."""
    if not path:
        return new
    target = root
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = new
    return root
