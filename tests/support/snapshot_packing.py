"""The build's packed snapshot file: Pyodide's heap with its zero pages left out.

Shared by the build's checks (``tests/test_build.py``) and the snapshot's browser tests.
"""

from __future__ import annotations

__all__ = ["pack", "unpack"]


def unpack(packed: bytes) -> bytearray:
    """Pyodide's snapshot from the build's packed file (zero pages left out)."""
    assert packed[:4] == b"PSNP"
    length, page = int.from_bytes(packed[4:8], "little"), int.from_bytes(packed[8:12], "little")
    pages = -(-length // page)
    bitmap, at = packed[12 : 12 + -(-pages // 8)], 12 + -(-pages // 8)
    out = bytearray(length)
    for i in range(pages):
        if bitmap[i >> 3] & (1 << (i & 7)):
            size = min(page, length - i * page)
            out[i * page : i * page + size] = packed[at : at + size]
            at += size
    assert at == len(packed)
    return out


def pack(snapshot: bytes, page: int = 4096) -> bytes:
    """The packed file for ``snapshot``, as tools/snapshot_page.mjs writes it."""
    pages = [snapshot[i : i + page] for i in range(0, len(snapshot), page)]
    bitmap = bytearray(-(-len(pages) // 8))
    kept = []
    for i, chunk in enumerate(pages):
        if any(chunk):
            bitmap[i >> 3] |= 1 << (i & 7)
            kept.append(chunk)
    head = b"PSNP" + len(snapshot).to_bytes(4, "little") + page.to_bytes(4, "little")
    return head + bytes(bitmap) + b"".join(kept)
