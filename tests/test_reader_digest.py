"""An export file's SHA-256: hashed by the reader, or by the host beside the parse.

A source that is a :class:`~panelot.idb.files.HostDigest` (a JS Blob in the browser)
hashes its own contents; the reader then hashes nothing itself and gives the host's
digest. The browser's own path is checked in tests/browser/test_backup_digest.py.
"""

from __future__ import annotations

import gc
import hashlib
import warnings
from collections.abc import Awaitable

import pytest

from loops import run_async
from panelot.idb.errors import ValidationError
from panelot.idb.files import BytesSource, HostDigest
from panelot.idb.transfer.reader import TextStream, read_header

DATA = b'{"formatName":"dexie","formatVersion":1,"data":{"x":"' + b"\xc3\xa9" * 3000 + b'"}}'


class HostHashed:
    """Bytes whose host answers the digest with ``answer`` (None: could not read)."""

    def __init__(self, data: bytes, answer: str | None) -> None:
        self.inner = BytesSource(data)
        self.answer = answer
        self.asked = 0
        self.awaited = 0

    @property
    def size(self) -> int:
        return self.inner.size

    def read(self, start: int, end: int) -> Awaitable[bytes]:
        return self.inner.read(start, end)

    def sha256(self) -> Awaitable[str | None]:
        self.asked += 1

        async def digest() -> str | None:
            self.awaited += 1
            return self.answer

        return digest()


async def _read_all(stream: TextStream) -> None:
    while await stream.more():
        stream.drop_consumed()


def test_the_reader_hashes_what_it_reads_when_the_host_does_not() -> None:
    async def go() -> str:
        stream = TextStream(BytesSource(DATA), 1024)
        await _read_all(stream)
        return await stream.sha256()

    assert not isinstance(BytesSource(DATA), HostDigest)
    assert run_async(go()) == hashlib.sha256(DATA).hexdigest()


def test_the_hosts_digest_is_asked_for_at_once_and_given_as_the_files() -> None:
    source = HostHashed(DATA, "ab" * 32)

    async def go() -> str:
        stream = TextStream(source, 1024)
        assert source.asked == 1  # before any read: it runs beside the parse
        await _read_all(stream)
        return await stream.sha256()

    assert isinstance(source, HostDigest)
    assert run_async(go()) == "ab" * 32  # the host's answer, not a hash computed here
    assert source.awaited == 1


def test_a_host_that_could_not_read_the_file_fails_the_digest_naming_the_file() -> None:
    async def go() -> None:
        stream = TextStream(HostHashed(DATA, None), 1024)
        await _read_all(stream)
        await stream.sha256()

    with pytest.raises(ValidationError) as caught:
        run_async(go())
    assert caught.value.field == "file" and "SHA-256" in caught.value.message


def test_the_digest_needs_the_whole_file_read() -> None:
    async def go() -> None:
        stream = TextStream(BytesSource(DATA), 1024)
        try:
            await stream.more()
            await stream.sha256()
        finally:
            stream.close()

    with pytest.raises(RuntimeError, match="not been read to its end"):
        run_async(go())


def test_a_stream_closed_early_drops_the_hosts_digest_without_a_warning() -> None:
    source = HostHashed(DATA, "cd" * 32)

    async def go() -> None:
        stream = TextStream(source, 1024)
        await stream.more()
        stream.close()

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "coroutine ... was never awaited" would raise
        run_async(go())
        gc.collect()
    assert source.asked == 1 and source.awaited == 0


def test_reading_only_the_header_asks_for_no_digest() -> None:
    source = HostHashed(DATA, "ef" * 32)
    with pytest.raises(ValidationError):  # DATA has no rows: the header is all it has
        run_async(read_header(source, 1024))
    assert source.asked == 0
