"""What a pull reads from the server (docs/sync.md "The protocol", pull steps 2-3).

* :func:`read_changes` — ``GET /db/_changes?since=…&style=all_docs&limit=…``, page by
  page, every leaf revision of each changed document;
* :func:`read_leaves` — ``POST /db/_bulk_get?revs=true&attachments=false`` for the
  revisions the state does not know (``GET /db/<id>?revs=true&open_revs=[…]`` when the
  server has no ``_bulk_get``);
* :func:`wait_changes` — ``GET /db/_changes?feed=longpoll&since=…&timeout=…``: the
  long-poll of continuous sync, answering once the server has a change after ``since``
  (or after the timeout);
* :func:`check_leaf` — a leaf's shape (``{table, v, record, clocks?}`` under the
  document's id and a revision asked for, nested at most :data:`MAX_DOC_DEPTH` deep,
  no NaN or infinity) before any rule reads it: a problem is a reason, never a crash.

An answer that is not what the protocol says (no ``results`` list, an entry without
an id or documents) raises :class:`~panelot.errors.NetworkError`: the pull writes
nothing and keeps its checkpoint. A document asked for and left out of a
``_bulk_get`` answer comes back as a refusal (:data:`NOT_ANSWERED`).

Every answer goes through :meth:`~panelot.sync.couch.Couch.call`, so its size is
bounded by :data:`~panelot.sync.couch.MAX_RESPONSE`.
"""

from __future__ import annotations

import json
import math
import urllib.parse
from typing import Any

from panelot.codec import MAX_JSON_DEPTH
from panelot.errors import NetworkError
from panelot.sync.couch import Couch
from panelot.sync.docid import split_doc_id
from panelot.sync.mapping import FORMAT, LIBRARY_TABLES
from panelot.sync.revs import rev_number

__all__ = [
    "CHANGES_LIMIT",
    "GET_CHUNK",
    "MAX_DOC_DEPTH",
    "NOT_ANSWERED",
    "check_leaf",
    "json_problem",
    "read_changes",
    "read_leaves",
    "wait_changes",
]

CHANGES_LIMIT = 200
"""Changes asked for per ``_changes`` page."""

GET_CHUNK = 100
"""Revisions asked for per ``_bulk_get``."""

_MAX_LEAVES = 32

MAX_DOC_DEPTH = MAX_JSON_DEPTH + 8
"""The deepest nesting of a pulled document (its record's free-form fields are bounded
at :data:`~panelot.codec.MAX_JSON_DEPTH`; the document wraps them in a few levels)."""

NOT_ANSWERED = "the server did not send any revision asked for"
"""The refusal of a document asked for and missing from the answer."""


async def read_changes(couch: Couch, since: Any) -> tuple[dict[str, list[str]], Any]:
    """Every synced document changed after ``since``: ``({id: [leaf revs]}, last_seq)``.

    Ids of no synced table (design documents, anything else) are skipped.
    """
    changed: dict[str, list[str]] = {}
    where = f"GET {couch.target.url}/_changes"
    while True:
        query = urllib.parse.urlencode(
            {"since": since, "style": "all_docs", "limit": CHANGES_LIMIT}
        )
        answer = await couch.call("GET", "/_changes?" + query)
        results = answer.get("results") if isinstance(answer, dict) else None
        if not isinstance(results, list):
            raise NetworkError(f"{where}: not a changes feed")
        for change in results:
            doc_id = change.get("id") if isinstance(change, dict) else None
            revs = change.get("changes") if isinstance(change, dict) else None
            if not isinstance(doc_id, str) or not isinstance(revs, list):
                continue
            try:
                split_doc_id(doc_id)
            except ValueError:
                continue
            named = [r.get("rev") for r in revs if isinstance(r, dict)]
            leaves = [rev for rev in named if isinstance(rev, str)]
            if leaves:
                changed[doc_id] = leaves[:_MAX_LEAVES]
        last = answer.get("last_seq")
        if last is None or last == since or len(results) < CHANGES_LIMIT:
            return changed, since if last is None else last
        since = last


async def wait_changes(couch: Couch, since: Any, seconds: float) -> bool:
    """Wait (at most ``seconds``) for a change after ``since``; whether one came."""
    query = urllib.parse.urlencode(
        {"feed": "longpoll", "since": since, "timeout": int(seconds * 1000), "limit": 1}
    )
    answer = await couch.call("GET", "/_changes?" + query, timeout=seconds + 10)
    results = answer.get("results") if isinstance(answer, dict) else None
    if not isinstance(results, list):
        raise NetworkError(f"GET {couch.target.url}/_changes: not a changes feed")
    return bool(results)


async def read_leaves(
    couch: Couch, wanted: dict[str, list[str]]
) -> dict[str, list[dict[str, Any]]]:
    """The leaf revisions ``wanted`` (``{id: [revs]}``), by id (what the server lacks: none)."""
    found: dict[str, list[dict[str, Any]]] = {}
    pairs = [(doc_id, rev) for doc_id, revs in sorted(wanted.items()) for rev in revs]
    for start in range(0, len(pairs), GET_CHUNK):
        chunk = pairs[start : start + GET_CHUNK]
        body = {"docs": [{"id": doc_id, "rev": rev} for doc_id, rev in chunk]}
        answer = await couch.call(
            "POST", "/_bulk_get?revs=true&attachments=false", body, missing_ok=True
        )
        if answer is None:  # no _bulk_get on this server: one GET per document
            for one in dict.fromkeys(d for d, _ in chunk):
                found[one] = await _open_revs(couch, one, wanted[one])
            continue
        results = answer.get("results") if isinstance(answer, dict) else None
        if not isinstance(results, list):
            raise NetworkError(f"POST {couch.target.url}/_bulk_get: not a _bulk_get answer")
        for result in results:
            named = result.get("id") if isinstance(result, dict) else None
            docs = result.get("docs") if isinstance(result, dict) else None
            if not isinstance(named, str) or not isinstance(docs, list):
                raise NetworkError(f"POST {couch.target.url}/_bulk_get: not a _bulk_get answer")
            if named not in wanted:
                continue
            for item in docs:
                ok = item.get("ok") if isinstance(item, dict) else None
                if isinstance(ok, dict):
                    found.setdefault(named, []).append(ok)
    return found


async def _open_revs(couch: Couch, doc_id: str, revs: list[str]) -> list[dict[str, Any]]:
    path = "/" + urllib.parse.quote(doc_id, safe=":")
    listed = json.dumps(revs, separators=(",", ":"))
    query = urllib.parse.urlencode({"revs": "true", "open_revs": listed})
    answer = await couch.call("GET", f"{path}?{query}", missing_ok=True)
    items = answer if isinstance(answer, list) else []
    oks = [item.get("ok") for item in items if isinstance(item, dict)]
    return [ok for ok in oks if isinstance(ok, dict)]


def check_leaf(doc_id: str, leaf: dict[str, Any], asked: list[str] | None = None) -> str | None:
    """What is wrong with a leaf's shape (``None``: nothing).

    ``asked``: the revisions asked for (a leaf of another one is refused).
    """
    table, key = split_doc_id(doc_id)
    if leaf.get("_id") != doc_id or not isinstance(leaf.get("_rev"), str):
        return "the document's _id or _rev is not the one asked for"
    if asked is not None and leaf["_rev"] not in asked:
        return "_rev: not a revision asked for"
    try:
        rev_number(leaf["_rev"])
    except ValueError:
        return "_rev: not a revision id"
    problem = json_problem(leaf)
    if problem is not None:
        return problem
    if leaf.get("_deleted") is True:
        return None
    if leaf.get("table") != table or leaf.get("v") != FORMAT:
        return f"table, v: must be {table!r} and {FORMAT}"
    record = leaf.get("record")
    if not isinstance(record, dict) or record.get("id") != key:
        return "record: must be an object whose id is the document's key"
    clocks = leaf.get("clocks")
    if clocks is not None and (
        not isinstance(clocks, dict) or not all(isinstance(v, str) for v in clocks.values())
    ):
        return "clocks: must be an object of clock strings"
    if table in LIBRARY_TABLES and not isinstance((clocks or {}).get("record"), str):
        return "clocks.record: a library record needs its clock"
    return None


def json_problem(value: Any) -> str | None:
    """Whether ``value`` nests deeper than :data:`MAX_DOC_DEPTH` or holds NaN or infinity.

    Iterative: a document nested deeper than Python recurses is a reason, not a crash.
    """
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return "a number JSON does not have (NaN or infinity)"
        children = item.values() if isinstance(item, dict) else item
        if not isinstance(item, (dict, list)):
            continue
        if depth > MAX_DOC_DEPTH:
            return f"the document is nested deeper than {MAX_DOC_DEPTH} levels"
        stack.extend((child, depth + 1) for child in children)
    return None
