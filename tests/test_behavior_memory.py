"""The shared behavior cases on the memory core, in CPython."""

from __future__ import annotations

import pytest

from behavior import discover, run_case
from loops import run_async
from panelot.idb import MemoryFactory

CASES = discover()


@pytest.mark.parametrize(("module", "case"), CASES, ids=[f"{m}.{c}" for m, c in CASES])
def test_memory(request: pytest.FixtureRequest, module: str, case: str) -> None:
    if module.startswith("sync."):
        request.getfixturevalue("couch_servers")  # started once, for the sync cases only
    result = run_async(run_case(module, case, MemoryFactory(), "memory"))
    assert result["ok"], result.get("error")


def test_cases_were_found() -> None:
    assert len(CASES) >= 5
