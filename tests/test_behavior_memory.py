"""The shared behavior cases on the memory core, in CPython."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest

from behavior import discover, run_case
from panelot.idb import MemoryFactory

CASES = discover()


@pytest.mark.parametrize(("module", "case"), CASES, ids=[f"{m}.{c}" for m, c in CASES])
def test_memory(module: str, case: str) -> None:
    # A fresh event loop in a worker thread: Playwright's sync API may own this thread's loop.
    with ThreadPoolExecutor(1) as pool:
        result = pool.submit(
            asyncio.run, run_case(module, case, MemoryFactory(), "memory")
        ).result()
    assert result["ok"], result.get("error")


def test_cases_were_found() -> None:
    assert len(CASES) >= 5
