"""``import_db``: a ``dexie-export-import`` file into a database, all or nothing.

An import has two passes:

1. :func:`read_import` streams the file (:mod:`~panelot.idb.transfer.reader`), checks
   its header against the database (name, version, tables, primary keys, as the addon
   does, each check waivable by its ``accept_*`` option), undoes Typeson's encoding of
   every row, applies ``filter`` and the caller's ``check_row``, and keeps the rows:
   Blob contents go straight into Blobs (JS Blobs in the browser), so Python holds the
   rows' plain data only. Nothing is written; any problem raises a
   :class:`~panelot.idb.errors.ValidationError` naming the table, the row and the field.
2. :func:`write_import` writes those rows inside a caller's read-write transaction,
   after clearing the tables when asked. One transaction commits all or nothing: a
   crash or a refused row leaves the database as it was.

:func:`import_db` runs both in a transaction of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from panelot.idb.blobs import make_blob
from panelot.idb.database import Database, Transaction
from panelot.idb.errors import BulkError, PanelotError, ValidationError
from panelot.idb.keys import Key, evaluate_key_path, validate_key
from panelot.idb.schema import TableSpec
from panelot.idb.transfer.export import dexie_version, index_src
from panelot.idb.transfer.reader import (
    ByteSource,
    Header,
    Rows,
    TableStart,
    TextStream,
    read_export,
)
from panelot.idb.transfer.sinks import blob_source
from panelot.idb.transfer.tson import revive

__all__ = [
    "CheckRow",
    "ImportOptions",
    "ImportPlan",
    "ImportProgress",
    "ImportResult",
    "TableRows",
    "import_db",
    "import_tables",
    "read_import",
    "write_import",
]

MAX_ROW_CHARS = 96 * 1024 * 1024
"""Largest row by default: a 64 MiB Blob as base64, with room for its record."""
WRITE_BATCH = 2000
"""Rows per write request."""

CheckRow = Callable[[str, Any, Any, str], Any]
"""``check_row(table, value, key, where)``: the value to store, or a ValidationError."""


@dataclass(frozen=True, slots=True)
class ImportProgress:
    """How far an import is: ``stage`` ``reading`` (bytes and rows) or ``writing`` (rows)."""

    stage: str
    total_tables: int
    completed_tables: int
    total_rows: int
    completed_rows: int
    total_bytes: int
    bytes: int
    done: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class ImportOptions:
    """How :func:`import_db` reads and writes (the addon's options that apply here).

    ``skip_tables`` are neither read into nor cleared; ``filter(table, value, key)``
    keeps a row when true; ``clear_tables_before_import`` empties every table of the
    database (but the skipped ones) first; ``overwrite_values`` puts rows instead of
    adding them (an existing key is then replaced rather than refused). The ``accept_*``
    options waive the addon's checks: another database name, another version, a table
    of the file the database lacks (its rows are skipped), a changed primary key.
    ``chunk_size_bytes`` is how much of the file is read at a time, ``max_row_chars``
    the largest row, ``progress`` called as the passes go. ``check_row`` lets a caller
    validate or transform each row (after ``filter``).
    """

    skip_tables: Sequence[str] = ()
    filter: Callable[[str, Any, Key | None], bool] | None = None
    clear_tables_before_import: bool = False
    overwrite_values: bool = False
    accept_name_diff: bool = False
    accept_version_diff: bool = False
    accept_missing_tables: bool = False
    accept_changed_primary_key: bool = False
    chunk_size_bytes: int = 1024 * 1024
    max_row_chars: int = MAX_ROW_CHARS
    progress: Callable[[ImportProgress], Any] | None = None
    check_row: CheckRow | None = None


@dataclass(slots=True)
class TableRows:
    """The rows to write into one table: values, and keys for an out-of-line table."""

    values: list[Any] = field(default_factory=list)
    keys: list[Key] | None = None


@dataclass(slots=True)
class ImportPlan:
    """What pass 1 read: the header, the rows by table, the file's size and SHA-256."""

    header: Header
    tables: dict[str, TableRows]
    size: int
    sha256: str
    skipped: list[str]
    """Tables of the file left out (``skip_tables``, or missing with ``accept_missing_tables``)."""

    @property
    def rows(self) -> int:
        """How many rows will be written."""
        return sum(len(t.values) for t in self.tables.values())


def _check_header(db: Database, header: Header, opts: ImportOptions) -> None:
    if not opts.accept_name_diff and header.database_name != db.name:
        raise ValidationError(
            f"data.databaseName: the file is of {header.database_name!r}, not {db.name!r}"
            " (accept_name_diff waives this)",
            field="data.databaseName",
        )
    ours = dexie_version(db.version)
    if not opts.accept_version_diff and header.database_version != ours:
        raise ValidationError(
            f"data.databaseVersion: the file is of version {header.database_version:g},"
            f" the database is at {ours:g} (accept_version_diff waives this)",
            field="data.databaseVersion",
        )


def _check_table(db: Database, name: str, schema: str, opts: ImportOptions) -> TableSpec | None:
    """The table to import ``name``'s rows into, or None to skip them."""
    if name in opts.skip_tables:
        return None
    if name not in db.core.tables:
        if opts.accept_missing_tables:
            return None
        raise ValidationError(
            f"data.tables: {name!r} is not a table of {db.name!r}"
            " (accept_missing_tables skips its rows)",
            field="data.tables",
        )
    spec = db.spec(name)
    if not opts.accept_changed_primary_key:
        theirs, ours = schema.split(",")[0].strip(), index_src(spec.primary_key, True)
        if theirs != ours:
            raise ValidationError(
                f"data.tables: the primary key of {name!r} is {theirs!r} in the file and"
                f" {ours!r} here (accept_changed_primary_key waives this)",
                field="data.tables",
            )
    return spec


def _row(
    db: Database, spec: TableSpec, inbound: bool, raw: Any, where: str
) -> tuple[Any, Key | None]:
    """One row's value and out-of-line key, Typeson undone; raises naming ``where``."""
    row = revive(raw, lambda data, mime: make_blob(db, data, mime), where)
    if inbound:
        key_path = spec.primary_key.key_path
        if not isinstance(row, dict):
            raise ValidationError(f"{where}: an inbound row must be an object", field=where)
        if key_path is not None and evaluate_key_path(row, key_path) is None:
            if not spec.primary_key.auto_increment:
                raise ValidationError(
                    f"{where}: no valid primary key at {key_path!r}", field=f"{where}"
                )
        return row, None
    if not isinstance(row, list) or len(row) != 2:
        raise ValidationError(f"{where}: an outbound row must be [key, value]", field=where)
    try:
        key = validate_key(row[0], f"{where}[0]")
    except PanelotError as exc:
        raise ValidationError(f"{where}[0]: not a valid key ({exc.message})", field=where) from None
    return row[1], key


async def read_import(
    db: Database, source: ByteSource | Any, options: ImportOptions | None = None
) -> ImportPlan:
    """Pass 1: read and check the whole file; return the rows to write. Writes nothing.

    ``source`` is a :class:`~panelot.idb.transfer.reader.ByteSource`, or bytes or a Blob
    of either core (see :func:`~panelot.idb.transfer.sinks.blob_source`).
    """
    opts = options or ImportOptions()
    await db.ready()
    stream = TextStream(blob_source(source), opts.chunk_size_bytes)
    try:
        return await _read_all(db, opts, stream)
    finally:
        stream.close()


async def _read_all(db: Database, opts: ImportOptions, stream: TextStream) -> ImportPlan:
    header: Header | None = None
    plan: dict[str, TableRows] = {}
    skipped: list[str] = []
    target: tuple[TableSpec, bool, TableRows] | None = None
    done_tables = 0
    done_rows = 0

    def report(end: bool = False) -> None:
        if opts.progress is not None and header is not None:
            opts.progress(
                ImportProgress(
                    "reading",
                    len(header.tables),
                    done_tables,
                    header.total_rows,
                    done_rows,
                    stream.size,
                    stream.bytes_read,
                    end,
                )
            )

    async for event in read_export(stream, opts.max_row_chars):
        if isinstance(event, Header):
            header = event
            _check_header(db, header, opts)
            report()
        elif isinstance(event, TableStart):
            assert header is not None
            done_tables = event.index
            schema = next(t.schema for t in header.tables if t.name == event.name)
            spec = _check_table(db, event.name, schema, opts)
            if spec is None:
                skipped.append(event.name)
                target = None
                continue
            inbound = spec.primary_key.key_path is not None
            if event.inbound != inbound:
                where = f"data.data[{event.index}].inbound"
                raise ValidationError(
                    f"{where}: {event.name!r} has {'in' if inbound else 'out-of-'}line keys here",
                    field=where,
                )
            rows = TableRows(keys=None if inbound else [])
            plan[event.name] = rows
            target = (spec, inbound, rows)
        elif isinstance(event, Rows):
            done_rows += len(event.rows)
            if target is not None:
                _take(db, opts, target, event)
            report()
    if header is None:  # pragma: no cover - read_export raises first
        raise ValidationError("data: missing", field="data")
    done_tables = len(header.tables)
    report(True)
    return ImportPlan(header, plan, stream.size, await stream.sha256(), skipped)


def _take(
    db: Database, opts: ImportOptions, target: tuple[TableSpec, bool, TableRows], batch: Rows
) -> None:
    spec, inbound, rows = target
    for i, raw in enumerate(batch.rows, batch.first):
        where = f"{spec.name}[{i}]"
        try:
            value, key = _row(db, spec, inbound, raw, where)
            if opts.filter is not None and not opts.filter(spec.name, value, key):
                continue
            if opts.check_row is not None:
                value = opts.check_row(spec.name, value, key, where)
        except RecursionError:  # a key or value nested deeper than Python walks
            raise ValidationError(f"{where}: nested too deeply", field=where) from None
        rows.values.append(value)
        if rows.keys is not None:
            assert key is not None
            rows.keys.append(key)


def import_tables(
    db: Database, plan: ImportPlan, options: ImportOptions | None = None
) -> list[str]:
    """The tables :func:`write_import` writes (and clears, when asked)."""
    opts = options or ImportOptions()
    if opts.clear_tables_before_import:
        return [t for t in db.core.tables if t not in opts.skip_tables]
    return list(plan.tables)


async def write_import(
    tx: Transaction, plan: ImportPlan, options: ImportOptions | None = None
) -> dict[str, int]:
    """Pass 2, inside ``tx``: clear (when asked) and write the rows; return rows per table.

    A row the database refuses (an existing key, a unique index, a value that cannot be
    stored) fails the transaction, so nothing of the import stays.
    """
    opts = options or ImportOptions()
    if opts.clear_tables_before_import:
        for name in import_tables(tx.db, plan, opts):
            await tx.table(name).clear()
    written: dict[str, int] = {}
    total = plan.rows
    done = 0
    for i, (name, rows) in enumerate(plan.tables.items()):
        table = tx.table(name)
        for start in range(0, len(rows.values), WRITE_BATCH):
            values = rows.values[start : start + WRITE_BATCH]
            keys = None if rows.keys is None else rows.keys[start : start + WRITE_BATCH]
            try:
                if opts.overwrite_values:
                    await table.bulk_put(values, keys, all_keys=False)
                else:
                    await table.bulk_add(values, keys, all_keys=False)
            except PanelotError as exc:
                raise _at_rows(exc, name, start) from None
            done += len(values)
            if opts.progress is not None:
                opts.progress(
                    ImportProgress(
                        "writing", len(plan.tables), i, total, done, plan.size, plan.size, False
                    )
                )
        written[name] = len(rows.values)
    if opts.progress is not None:
        n = len(plan.tables)
        opts.progress(ImportProgress("writing", n, n, total, done, plan.size, plan.size, True))
    return written


def _at_rows(exc: PanelotError, table: str, start: int) -> PanelotError:
    """``exc`` (from a write of rows from ``start``) with the table and row named."""
    if isinstance(exc, BulkError) and exc.failures:
        first = min(exc.failures)
        inner = exc.failures[first]
        where = f"{table}[{start + first}]"
        inner.message = f"{where}: {inner.message}"
        inner.field = where if inner.field is None else f"{where}.{inner.field}"
        return inner
    exc.message = f"{table} (rows from {start}): {exc.message}"
    exc.field = f"{table}[{start}:]" if exc.field is None else f"{table}.{exc.field}"
    return exc


@dataclass(frozen=True, slots=True)
class ImportResult:
    """What :func:`import_db` did: rows written by table, tables skipped, the file's digest."""

    tables: dict[str, int]
    skipped: list[str]
    size: int
    sha256: str


async def import_db(
    db: Database, source: ByteSource | Any, options: ImportOptions | None = None
) -> ImportResult:
    """Import a whole file into ``db``: read and check it all, then write it in one transaction."""
    opts = options or ImportOptions()
    plan = await read_import(db, source, opts)
    tables = import_tables(db, plan, opts)
    written: dict[str, int] = {}
    if tables:

        async def body(tx: Transaction) -> dict[str, int]:
            return await write_import(tx, plan, opts)

        written = await db.transaction("rw", tables, body)
    return ImportResult(written, plan.skipped, plan.size, plan.sha256)
