"""The README documents every command and query the bus and the store expose."""

from __future__ import annotations

from pathlib import Path

import pytest

from panelot.api.registry import COMMANDS, QUERIES

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_command_is_documented(name: str) -> None:
    assert f"`{name}`" in README, f"README.md does not document the command {name!r}"


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_query_is_documented(name: str) -> None:
    assert f"`{name}`" in README, f"README.md does not document the query {name!r}"
