"""`build.py test` and `build.py fuzz` hand everything after them to pytest, in order."""

from __future__ import annotations

from types import ModuleType

import pytest

from test_fresh_setup import load_build


def dry_build(monkeypatch: pytest.MonkeyPatch) -> tuple[ModuleType, list[tuple[str, object]]]:
    """build.py with every step replaced by a recorder of what it was called with."""
    build = load_build()
    calls: list[tuple[str, object]] = []
    for name in ("setup", "build", "test", "fuzz", "bench", "launch"):
        monkeypatch.setattr(build, name, lambda *a, _n=name: calls.append((_n, list(a))))
    return build, calls


@pytest.mark.parametrize("command", ["test", "fuzz"])
@pytest.mark.parametrize(
    "words",
    [
        [],
        ["-k", "NAME"],
        ["-m", "fuzz", "-q"],
        ["tests/test_x.py", "-k", "a and not b", "-x"],
        ["-x", "tests/test_x.py", "--hypothesis-seed=3"],
    ],
)
def test_pytest_gets_the_words_unchanged(
    monkeypatch: pytest.MonkeyPatch, command: str, words: list[str]
) -> None:
    build, calls = dry_build(monkeypatch)
    build.main([command, *words])
    assert calls == [("setup", []), ("build", []), (command, [words])]


def test_other_commands_refuse_extra_words(monkeypatch: pytest.MonkeyPatch) -> None:
    build, calls = dry_build(monkeypatch)
    with pytest.raises(SystemExit):
        build.main(["setup", "-x"])
    assert calls == []
