"""``export_db``: a whole database as a ``dexie-export-import`` file, streamed.

The file is the addon's format, ``data`` last so it can be read as a stream::

    {"formatName": "dexie", "formatVersion": 1, ...sections,
     "data": {"databaseName", "databaseVersion", "tables": [{name, schema, rowCount}],
              "data": [{"tableName", "inbound", "rows": [...]}, ...]}}

Every table is read in one readonly transaction (a consistent snapshot), in chunks of
``rows_per_chunk`` by primary key, as the addon reads it; each chunk becomes text for
the :mod:`sink <panelot.idb.transfer.sinks>` at once, and Blobs become their base64
after the transaction. Rows are Typeson-encoded (:mod:`panelot.idb.transfer.tson`);
out-of-line tables' rows are ``[key, value]`` pairs.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from panelot.idb.blobs import is_blob
from panelot.idb.core import Count, Query
from panelot.idb.database import Database, Transaction
from panelot.idb.errors import ValidationError
from panelot.idb.keys import Key, KeyRange, evaluate_key_path
from panelot.idb.schema import IndexSpec, TableSpec
from panelot.idb.transfer.sinks import Sink, sink_for
from panelot.idb.transfer.tson import encapsulate

__all__ = [
    "ExportOptions",
    "ExportProgress",
    "dexie_version",
    "export_db",
    "schema_string",
]

EXPORT_MIME = "text/json"
"""The MIME type the addon gives its files."""


@dataclass(frozen=True, slots=True)
class ExportProgress:
    """How far an export is: tables and rows done out of the totals, bytes written."""

    total_tables: int
    completed_tables: int
    total_rows: int
    completed_rows: int
    bytes: int
    done: bool
    row_counts: Mapping[str, int] = field(default_factory=dict)
    """Rows of each exported table, as the file's header gives them."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ExportOptions:
    """What :func:`export_db` writes (the addon's options that apply here).

    ``skip_tables`` are left out; ``filter(table, value, key)`` keeps a row when true
    (``key`` for out-of-line tables only); ``rows_per_chunk`` rows are read at a time;
    ``progress`` is called after each chunk and once at the end; ``sections`` are
    further top-level fields written ahead of ``data`` (JSON data).
    """

    skip_tables: Sequence[str] = ()
    filter: Callable[[str, Any, Key | None], bool] | None = None
    rows_per_chunk: int = 2000
    progress: Callable[[ExportProgress], Any] | None = None
    sections: Mapping[str, Any] = field(default_factory=dict)


def index_src(index: IndexSpec, primary: bool) -> str:
    """Dexie's ``src`` of an index: ``&`` unique, ``*`` multiEntry, ``++`` auto-increment."""
    unique = "&" if index.unique and not primary else ""
    multi = "*" if index.multi_entry else ""
    auto = "++" if index.auto_increment else ""
    return f"{unique}{multi}{auto}{index.name}"


def schema_string(spec: TableSpec) -> str:
    """The table's schema as the addon writes it: Dexie's ``src`` of each index, ``,``-joined."""
    parts = [index_src(spec.primary_key, True)]
    parts += [index_src(i, False) for i in spec.indexes]
    return ",".join(parts)


def dexie_version(native: int) -> int | float:
    """Dexie's version number (``db.verno``) of a native IndexedDB version."""
    return native // 10 if native % 10 == 0 else native / 10


class _Writer:
    """One export's text: rows encoded in chunks, Blobs as tokens replaced by their base64."""

    def __init__(self, sink: Sink) -> None:
        self.sink = sink
        self.nonce = secrets.token_hex(8)
        self._blobs: list[Any] = []

    def _token(self, blob: Any) -> str:
        self._blobs.append(blob)
        return f"\x00blob:{self.nonce}:{len(self._blobs) - 1}\x00"

    def rows(self, rows: list[Any]) -> None:
        """Write rows (already paired with keys for out-of-line tables), ``,``-separated."""
        try:
            if any(type(r) is dict and "$types" in r for r in rows):
                raise TypeError("a field named $types: Typeson escapes the row")
            text = json.dumps(rows, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        except (TypeError, ValueError):  # a Blob, bytes, a date or NaN: Typeson's form
            encoded = [encapsulate(r, is_blob, self._token) for r in rows]
            text = json.dumps(encoded, ensure_ascii=False, separators=(",", ":"))
        self._emit(text[1:-1])

    def _emit(self, text: str) -> None:
        if not self._blobs:
            self.sink.text(text)
            return
        # json.dumps writes the token's NULs as \u0000: split the text around each one.
        marker = f"\\u0000blob:{self.nonce}:"
        pos = 0
        for i, blob in enumerate(self._blobs):
            at = text.index(f"{marker}{i}\\u0000", pos)
            self.sink.text(text[pos:at])
            self.sink.blob(blob)
            pos = at + len(f"{marker}{i}\\u0000")
        self.sink.text(text[pos:])
        self._blobs = []


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


async def export_db(db: Database, options: ExportOptions | None = None) -> Any:
    """Export every table of ``db`` (but ``skip_tables``) as one file; return it as a Blob.

    In the browser the result is a JS Blob (``text/json``) built from parts; on the
    memory core a :class:`~panelot.idb.blobs.MemoryBlob`. The tables are read in one
    readonly transaction, so the file is one consistent state of the database.
    """
    opts = options or ExportOptions()
    if opts.rows_per_chunk < 1:
        raise ValidationError("rows_per_chunk: must be at least 1", field="rows_per_chunk")
    core = await db.ready()
    unknown = [t for t in opts.skip_tables if t not in core.tables]
    if unknown:
        raise ValidationError(f"skip_tables: no table {unknown[0]!r}", field="skip_tables")
    reserved = [k for k in opts.sections if k in ("formatName", "formatVersion", "data")]
    if reserved:
        raise ValidationError(f"sections: {reserved[0]!r} is the format's own", field="sections")
    names = [t for t in core.tables if t not in opts.skip_tables]
    sink = sink_for(core)
    writer = _Writer(sink)
    row_counts: dict[str, int] = {}
    done = [0, 0]  # tables, rows

    def report(end: bool = False) -> None:
        if opts.progress is not None:
            total = sum(row_counts.values())
            opts.progress(
                ExportProgress(
                    len(names), done[0], total, done[1], sink.bytes, end, dict(row_counts)
                )
            )

    async def body(tx: Transaction) -> None:
        counts = await tx.gather(*(tx.request(Count(n, None, KeyRange())) for n in names))
        row_counts.update(zip(names, counts, strict=True))
        sink.text('{"formatName":"dexie","formatVersion":1')
        for key, value in opts.sections.items():
            sink.text(f",{_json(key)}:{_json(value)}")
        tables = [
            {"name": n, "schema": schema_string(db.spec(n)), "rowCount": c}
            for n, c in zip(names, counts, strict=True)
        ]
        head = {"databaseName": db.name, "databaseVersion": dexie_version(core.version)}
        sink.text(f',"data":{_json(head)[:-1]},"tables":{_json(tables)},"data":[')
        for i, name in enumerate(names):
            spec = db.spec(name)
            inbound = spec.primary_key.key_path is not None
            prefix = "," if i else ""
            sink.text(f'{prefix}{{"tableName":{_json(name)},"inbound":{_json(inbound)},"rows":[')
            first = True
            async for rows, read in _chunks(tx, spec, opts.rows_per_chunk, opts.filter):
                if rows:
                    if not first:
                        sink.text(",")
                    writer.rows(rows)
                    first = False
                done[1] += read
                report()
            sink.text("]}")
            done[0] += 1
            report()
        sink.text("]}}")

    await db.transaction("r", names, body)
    sink.flush()
    report(end=True)
    return await sink.finish(EXPORT_MIME)


async def _chunks(
    tx: Transaction,
    spec: TableSpec,
    limit: int,
    keep: Callable[[str, Any, Key | None], bool] | None,
) -> Any:
    """Yield ``(rows, read)``: each chunk's rows as written, and how many were read."""
    key_path = spec.primary_key.key_path
    last: Key | None = None
    while True:
        span = KeyRange() if last is None else KeyRange(lower=last, lower_open=True)
        if key_path is not None:
            values = await tx.request(Query(spec.name, None, span, "values", limit=limit))
            if not values:
                return
            last = evaluate_key_path(values[-1], key_path)
            rows = [v for v in values if keep is None or keep(spec.name, v, None)]
        else:
            values, keys = await tx.gather(
                tx.request(Query(spec.name, None, span, "values", limit=limit)),
                tx.request(Query(spec.name, None, span, "primaryKeys", limit=limit)),
            )
            if not values:
                return
            last = keys[-1]
            pairs = zip(keys, values, strict=True)
            rows = [[k, v] for k, v in pairs if keep is None or keep(spec.name, v, k)]
        yield rows, len(values)
        if len(values) < limit:
            return
