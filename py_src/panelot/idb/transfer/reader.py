"""Reading an export file as a stream: bytes in chunks, the header, then rows.

The file is read ``chunk_bytes`` at a time from a :class:`ByteSource` (a Blob in the
browser, bytes in CPython), decoded as UTF-8 incrementally, and parsed without ever
holding more than the current row and one chunk: structural characters are scanned
here, and each row (and each header field) is one ``json.JSONDecoder.raw_decode`` in
C. A value cut by a chunk's end is parsed again once the next chunk has arrived, so
one row may not be larger than ``max_row_chars``.

:func:`read_export` yields the events of one file in order: a :class:`Header` when the
rows begin, then per table a :class:`TableStart` and batches of :class:`Rows`. Every
error is a :class:`~panelot.idb.errors.ValidationError` that names where in the file
(``data.data[2].rows[17]``) and what is wrong.
"""

from __future__ import annotations

import codecs
import hashlib
import json
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable
from dataclasses import dataclass, field
from typing import Any

from panelot.idb.errors import ValidationError
from panelot.idb.files import ByteSource, BytesSource, HostDigest

__all__ = [
    "ByteSource",
    "BytesSource",
    "Header",
    "Rows",
    "TableInfo",
    "TableStart",
    "TextStream",
    "read_export",
    "read_header",
]

FORMAT_NAME = "dexie"
FORMAT_VERSION = 1
MAX_HEADER_CHARS = 16 * 1024 * 1024
"""Largest header field (the table list, a settings section)."""
MAX_TABLES = 1000
BATCH_BYTES = 4 * 1024 * 1024
"""A batch of rows ends once this much of the file has been read for it (large rows)."""
_WS = " \t\n\r"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def _drop(pending: Awaitable[Any] | None) -> None:
    """Close a coroutine that will not be awaited, so it warns of nothing."""
    if pending is not None and hasattr(pending, "close"):
        pending.close()


class TextStream:
    """A source's text, decoded chunk by chunk, with a read position.

    ``bytes_read`` is how many bytes have been read. Unless ``hashed`` is False,
    :meth:`sha256` gives the whole file's digest once it has been read: computed by the
    host beside the parse when the source is a :class:`~panelot.idb.files.HostDigest`
    that offers it, else here, chunk by chunk.
    """

    def __init__(self, source: ByteSource, chunk_bytes: int, *, hashed: bool = True) -> None:
        if chunk_bytes < 1024:
            raise ValidationError("chunk_bytes: must be at least 1024", field="chunk_bytes")
        self.source = source
        self.chunk = chunk_bytes
        self.size = int(source.size)
        self.bytes_read = 0
        host = source.sha256() if hashed and isinstance(source, HostDigest) else None
        self._host_digest: Awaitable[str | None] | None = host
        self._digest = hashlib.sha256() if hashed and host is None else None
        self._decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self.buf = ""
        self.pos = 0
        self._ahead: tuple[int, int, Awaitable[bytes]] | None = None

    @property
    def eof(self) -> bool:
        """Whether every byte has been read."""
        return self.bytes_read >= self.size

    def _read(self, start: int, end: int) -> Awaitable[bytes]:
        """The read of ``[start, end)``: the one asked for ahead, if it is that one."""
        ahead, self._ahead = self._ahead, None
        if ahead is not None and ahead[:2] == (start, end):
            return ahead[2]
        _drop(None if ahead is None else ahead[2])
        return self.source.read(start, end)

    def close(self) -> None:
        """Drop what was started and is not needed: a read ahead, the host's digest."""
        ahead, self._ahead = self._ahead, None
        _drop(None if ahead is None else ahead[2])
        host, self._host_digest = self._host_digest, None
        _drop(host)  # the host's work never fails: nothing is lost unawaited

    async def sha256(self) -> str:
        """The SHA-256 of the whole file as lowercase hex; call once, after the last read."""
        if not self.eof:
            raise RuntimeError("sha256: the file has not been read to its end")
        host, self._host_digest = self._host_digest, None
        if host is not None:
            digest = await host
            if digest is None:
                raise ValidationError(
                    "file: could not be read again to compute its SHA-256"
                    " (the file changed or was removed while being read)",
                    field="file",
                )
            return digest
        if self._digest is None:
            raise RuntimeError("sha256: this stream was opened with hashed=False")
        return self._digest.hexdigest()

    async def more(self, at_least: int = 0) -> bool:
        """Read the next chunk (or ``at_least`` bytes); False at the end of the file."""
        if self.eof:
            return False
        start = self.bytes_read
        end = min(self.size, start + max(self.chunk, at_least))
        data = await self._read(start, end)
        if len(data) != end - start:
            raise ValidationError(
                f"file: read {len(data)} bytes at byte {start}, expected {end - start}"
                " (the file changed or was cut while being read)",
                field="file",
            )
        self.bytes_read = end
        if end < self.size:  # the next chunk is read while this one is parsed
            after = min(self.size, end + self.chunk)
            self._ahead = (end, after, self.source.read(end, after))
        if self._digest is not None:
            self._digest.update(data)
        try:
            text = self._decoder.decode(data, final=self.eof)
        except UnicodeDecodeError as exc:
            raise ValidationError(
                f"file: not UTF-8 text near byte {start + exc.start}", field="file"
            ) from None
        if self.pos > len(self.buf) // 2:
            self.buf = self.buf[self.pos :] + text
            self.pos = 0
        else:
            self.buf += text
        return True

    def drop_consumed(self) -> None:
        """Forget the text before the read position."""
        if self.pos:
            self.buf = self.buf[self.pos :]
            self.pos = 0

    async def peek(self, where: str) -> str:
        """The next character that is not white space ("" at the end of the file)."""
        while True:
            buf, pos, n = self.buf, self.pos, len(self.buf)
            while pos < n and buf[pos] in _WS:
                pos += 1
            self.pos = pos
            if pos < n:
                return buf[pos]
            if not await self.more():
                return ""

    async def expect(self, chars: str, where: str) -> str:
        """Consume the next non-space character, which must be one of ``chars``."""
        found = await self.peek(where)
        if not found or found not in chars:
            shown = repr(found) if found else "the end of the file"
            wanted = " or ".join(repr(c) for c in chars)
            raise ValidationError(
                f"{where}: expected {wanted}, found {shown} at byte ~{self._at()}", field=where
            )
        self.pos += 1
        return found

    def _at(self) -> int:
        """An estimate of the byte offset of the read position (for messages)."""
        return max(0, self.bytes_read - len(self.buf.encode("utf-8", "surrogatepass")[self.pos :]))

    async def value(self, where: str, max_chars: int) -> Any:
        """Parse one JSON value at the read position (read more as needed)."""
        if not await self.peek(where):
            raise ValidationError(f"{where}: the file ends before this value", field=where)
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buf, self.pos)
            except RecursionError:
                raise ValidationError(f"{where}: nested too deeply", field=where) from None
            except ValueError as exc:  # JSONDecodeError too: maybe cut by the chunk's end
                if self.eof:
                    raise ValidationError(f"{where}: not valid JSON ({exc})", field=where) from None
                pending = len(self.buf) - self.pos
                if pending > max_chars:
                    raise ValidationError(
                        f"{where}: larger than {max_chars} characters", field=where
                    ) from None
                await self.more(at_least=pending)
                continue
            if end >= len(self.buf) and not self.eof:
                # A number may go on in the next chunk: read on and parse again.
                await self.more()
                continue
            if end - self.pos > max_chars:
                raise ValidationError(f"{where}: larger than {max_chars} characters", field=where)
            self.pos = end
            return value

    async def string(self, where: str) -> str:
        """Parse one JSON string (an object's key)."""
        if await self.peek(where) != '"':
            raise ValidationError(f"{where}: expected a string", field=where)
        key = await self.value(where, 4096)
        if not isinstance(key, str):
            raise ValidationError(f"{where}: expected a string", field=where)
        return key


@dataclass(frozen=True, slots=True)
class TableInfo:
    """One entry of the header's table list: ``{name, schema, rowCount}``."""

    name: str
    schema: str
    row_count: int


@dataclass(slots=True)
class Header:
    """Everything before the rows: the format, the database and its tables.

    ``extra`` holds the top-level fields besides ``formatName``, ``formatVersion`` and
    ``data`` (a section a writer added, such as Panelot's settings), as parsed.
    """

    database_name: str
    database_version: float
    tables: list[TableInfo]
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def total_rows(self) -> int:
        """The sum of the tables' row counts."""
        return sum(t.row_count for t in self.tables)


@dataclass(frozen=True, slots=True)
class TableStart:
    """The rows that follow belong to ``name``: values if ``inbound``, else ``[key, value]``."""

    name: str
    inbound: bool
    index: int


@dataclass(frozen=True, slots=True)
class Rows:
    """A batch of one table's rows as parsed (Typeson's ``$types`` not undone yet)."""

    table: str
    first: int
    rows: list[Any]


def _table_info(raw: Any, i: int) -> TableInfo:
    where = f"data.tables[{i}]"
    if not isinstance(raw, dict):
        raise ValidationError(f"{where}: must be an object", field=where)
    name, schema, count = raw.get("name"), raw.get("schema"), raw.get("rowCount")
    if not isinstance(name, str) or not name:
        raise ValidationError(f"{where}.name: must be a non-empty string", field=f"{where}.name")
    if not isinstance(schema, str):
        raise ValidationError(f"{where}.schema: must be a string", field=f"{where}.schema")
    if type(count) is not int or count < 0:
        raise ValidationError(
            f"{where}.rowCount: must be a non-negative integer", field=f"{where}.rowCount"
        )
    return TableInfo(name, schema, count)


def _header(top: dict[str, Any], data: dict[str, Any]) -> Header:
    if top.get("formatName") != FORMAT_NAME:
        raise ValidationError("formatName: this is not a Dexie export", field="formatName")
    version = top.get("formatVersion")
    if type(version) is not int or not 1 <= version <= FORMAT_VERSION:
        raise ValidationError(
            f"formatVersion: {version!r} is not supported (only {FORMAT_VERSION})",
            field="formatVersion",
        )
    name = data.get("databaseName")
    if not isinstance(name, str) or not name:
        raise ValidationError(
            "data.databaseName: must be a non-empty string", field="data.databaseName"
        )
    db_version = data.get("databaseVersion")
    if not isinstance(db_version, int | float) or isinstance(db_version, bool):
        db_version = -1
    if not 0 < db_version < 2**53:
        raise ValidationError(
            "data.databaseVersion: must be a positive number", field="data.databaseVersion"
        )
    raw_tables = data.get("tables")
    if not isinstance(raw_tables, list) or len(raw_tables) > MAX_TABLES:
        raise ValidationError(
            f"data.tables: must be a list of at most {MAX_TABLES} tables", field="data.tables"
        )
    tables = [_table_info(t, i) for i, t in enumerate(raw_tables)]
    names = [t.name for t in tables]
    if len(set(names)) != len(names):
        raise ValidationError("data.tables: a table is listed twice", field="data.tables")
    extra = {k: v for k, v in top.items() if k not in ("formatName", "formatVersion", "data")}
    return Header(name, float(db_version), tables, extra)


async def _object_members(stream: TextStream, where: str) -> AsyncIterator[tuple[str, str]]:
    """The keys of the object at the read position, each followed by its value's place."""
    await stream.expect("{", where)
    if await stream.peek(where) == "}":
        stream.pos += 1
        return
    while True:
        key = await stream.string(where)
        await stream.expect(":", where)
        yield key, f"{where}.{key}" if where else key
        if await stream.expect(",}", where) == "}":
            return


async def read_export(
    stream: TextStream, max_row_chars: int, batch_rows: int = 2000
) -> AsyncGenerator[Header | TableStart | Rows, None]:
    """The events of one export file, in order (see the module's docstring)."""
    top: dict[str, Any] = {}
    saw_data = False
    async for key, where in _object_members(stream, ""):
        if key in top or (key == "data" and saw_data):
            raise ValidationError(f"{where}: appears twice", field=where)
        if key != "data":
            top[key] = await stream.value(where, MAX_HEADER_CHARS)
            continue
        saw_data = True
        data: dict[str, Any] = {}
        async for dkey, dwhere in _object_members(stream, "data"):
            if dkey in data:
                raise ValidationError(f"{dwhere}: appears twice", field=dwhere)
            if dkey != "data":
                data[dkey] = await stream.value(dwhere, MAX_HEADER_CHARS)
                continue
            data["data"] = True
            header = _header(top, data)
            yield header
            async for event in _tables(stream, header, max_row_chars, batch_rows):
                yield event
        if "data" not in data:
            raise ValidationError("data.data: missing (no rows)", field="data.data")
    if not saw_data:
        _header(top, {})  # names what is missing first (format, then the data)
        raise ValidationError("data: missing", field="data")
    if await stream.peek("file"):
        raise ValidationError("file: text after the end of the export", field="file")


async def _tables(
    stream: TextStream, header: Header, max_row_chars: int, batch_rows: int
) -> AsyncIterator[TableStart | Rows]:
    listed = {t.name for t in header.tables}
    seen: set[str] = set()
    await stream.expect("[", "data.data")
    index = 0
    if await stream.peek("data.data") == "]":
        stream.pos += 1
        return
    while True:
        where = f"data.data[{index}]"
        name: str | None = None
        inbound: bool | None = None
        got_rows = False
        async for key, kwhere in _object_members(stream, where):
            if key == "tableName":
                name = await stream.value(kwhere, 4096)
                if not isinstance(name, str) or name not in listed:
                    raise ValidationError(
                        f"{kwhere}: {name!r} is not a table listed in data.tables", field=kwhere
                    )
                if name in seen:
                    raise ValidationError(f"{kwhere}: {name!r} appears twice", field=kwhere)
                seen.add(name)
            elif key == "inbound":
                inbound = await stream.value(kwhere, 16)
                if not isinstance(inbound, bool):
                    raise ValidationError(f"{kwhere}: must be true or false", field=kwhere)
            elif key == "rows":
                if name is None or inbound is None or got_rows:
                    raise ValidationError(
                        f"{kwhere}: must come once, after tableName and inbound", field=kwhere
                    )
                got_rows = True
                yield TableStart(name, inbound, index)
                async for batch in _rows(stream, name, kwhere, max_row_chars, batch_rows):
                    yield batch
            else:
                raise ValidationError(f"{kwhere}: unexpected field", field=kwhere)
        if not got_rows:
            raise ValidationError(f"{where}.rows: missing", field=f"{where}.rows")
        index += 1
        if await stream.expect(",]", "data.data") == "]":
            return


async def _rows(
    stream: TextStream, table: str, where: str, max_row_chars: int, batch_rows: int
) -> AsyncIterator[Rows]:
    await stream.expect("[", where)
    batch: list[Any] = []
    first = 0
    count = 0
    if await stream.peek(where) == "]":
        stream.pos += 1
        return
    started = stream.bytes_read
    while True:
        batch.append(await stream.value(f"{where}[{count}]", max_row_chars))
        count += 1
        if len(batch) >= batch_rows or stream.bytes_read - started >= BATCH_BYTES:
            yield Rows(table, first, batch)
            stream.drop_consumed()
            first, batch, started = count, [], stream.bytes_read
        if await stream.expect(",]", where) == "]":
            break
    if batch:
        yield Rows(table, first, batch)


async def read_header(source: ByteSource, chunk_bytes: int = 64 * 1024) -> Header:
    """Only the header of an export (what a restore would replace it with), read quickly."""
    stream = TextStream(source, chunk_bytes, hashed=False)
    events = read_export(stream, MAX_HEADER_CHARS)
    try:
        async for event in events:
            if isinstance(event, Header):
                return event
    finally:
        await events.aclose()
        stream.close()
    raise ValidationError("data.data: missing (no rows)", field="data.data")  # pragma: no cover
