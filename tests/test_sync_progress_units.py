"""Units of ``panelot.sync.progress``: when a progress row is written, shown and cleared.

On a memory state database; ``progress.monotonic`` is replaced by a counter the test moves,
so the 0.5 s throttle is checked without waiting.
"""

from __future__ import annotations

from typing import Any

import pytest

from loops import run_async
from panelot.idb import Database, MemoryFactory, Transaction
from panelot.sync import progress
from panelot.sync.progress import EVERY_SECONDS, MANY, STALE_MS, Progress, shown
from panelot.sync.state import read_meta, state_database, write_meta


class _Time:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def moment(monkeypatch: pytest.MonkeyPatch) -> _Time:
    clock = _Time()
    monkeypatch.setattr(progress, "monotonic", clock)
    return clock


async def _row(state: Database) -> Any:
    async def read(tx: Transaction) -> Any:
        return await read_meta(tx, progress.KEY)

    return await state.transaction("r", ["meta"], read)


def test_a_quick_small_sync_writes_nothing(moment: _Time) -> None:
    async def run() -> None:
        state = await state_database("units-progress-a").open(MemoryFactory())
        steps = Progress(state, lambda: 1_000, "loop")
        await steps.step("comparing", 0, None)
        await steps.step("sending", 0, MANY - 1)
        assert steps.writes == 0 and await _row(state) is None
        await steps.clear()
        assert await _row(state) is None
        moment.now += EVERY_SECONDS  # it lasts: now it shows
        await steps.step("sending", 3, MANY - 1)
        assert steps.writes == 1
        row = await _row(state)
        assert row["phase"] == "sending" and row["done"] == 3 and row["source"] == "loop"
        await steps.clear()
        assert await _row(state) is None

    run_async(run())


def test_a_large_phase_shows_at_once_then_at_most_every_half_second(moment: _Time) -> None:
    async def run() -> None:
        state = await state_database("units-progress-b").open(MemoryFactory())
        steps = Progress(state, lambda: 1_000, "command")
        await steps.step("receiving", 0, MANY)
        await steps.step("receiving", 100, MANY)  # within 0.5 s: not written
        assert steps.writes == 1 and (await _row(state))["done"] == 0
        await steps.step("writing", 0, MANY)  # a new phase: written at once
        assert steps.writes == 2
        moment.now += EVERY_SECONDS
        await steps.step("writing", 40, MANY)
        assert steps.writes == 3 and (await _row(state))["done"] == 40

    run_async(run())


def test_clear_drops_only_its_own_row(moment: _Time) -> None:
    async def run() -> None:
        state = await state_database("units-progress-c").open(MemoryFactory())
        mine = Progress(state, lambda: 1_000, "loop")
        await mine.step("receiving", 0, MANY)
        theirs = Progress(state, lambda: 1_000, "command")
        await theirs.step("sending", 0, MANY)
        await mine.clear()  # the row is theirs now: it stays
        assert (await _row(state))["source"] == "command"
        await theirs.clear()
        assert await _row(state) is None

    run_async(run())


def test_a_stale_or_malformed_row_is_not_shown() -> None:
    row = {"phase": "writing", "done": 1, "total": 2, "at": 10_000, "source": "loop", "id": "x"}
    assert shown(row, 10_000 + STALE_MS) == {k: row[k] for k in row if k != "id"}
    assert shown(row, 10_000 + STALE_MS + 1) is None
    assert shown({**row, "phase": "dancing"}, 10_000) is None
    assert shown({**row, "at": "soon"}, 10_000) is None
    assert shown(None, 10_000) is None


def test_write_meta_shape_is_what_status_reads() -> None:
    async def run() -> None:
        state = await state_database("units-progress-d").open(MemoryFactory())

        async def put(tx: Transaction) -> None:
            await write_meta(tx, progress.KEY, {"phase": "comparing", "at": 5, "total": None})

        await state.transaction("rw", ["meta"], put)
        found = shown(await _row(state), 5)
        assert found is not None and found["total"] is None and found["done"] is None

    run_async(run())
