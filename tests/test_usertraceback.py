"""The console's tracebacks, trimmed to the typed code (panelot.console.tracebacks)."""

from __future__ import annotations

import pytest

from panelot.console.tracebacks import format_error


def _lookup(threads: list[str], wanted: str) -> str:
    try:
        raise StopIteration(threads)  # carries a whole query result
    except StopIteration:
        raise LookupError(f"no thread {wanted!r}")  # noqa: B904 - the chaining under test


def _raised(source: str, scope: dict[str, object]) -> BaseException:
    code = compile(source, "<console>", "exec")
    with pytest.raises(BaseException) as caught:
        exec(code, scope)  # noqa: S102 - the test's own source
    return caught.value


def test_only_the_typed_frames_and_the_error_are_shown() -> None:
    error = _raised("x = 1\nlookup(['t1'] * 1000, 'zzzz')", {"lookup": _lookup})
    assert format_error(error, "x = 1\nlookup(['t1'] * 1000,   'zzzz')") == (
        "Traceback (most recent call last):\n"
        '  File "<console>", line 2, in <module>\n'
        "    lookup(['t1'] * 1000,   'zzzz')\n"  # the line as typed
        "LookupError: no thread 'zzzz'"
        "\n"
    )


def test_a_chain_raised_in_typed_code_is_kept() -> None:
    source = "try:\n    1/0\nexcept ZeroDivisionError as e:\n    raise ValueError('v') from e"
    out = format_error(_raised(source, {}), source)
    assert out == (
        "Traceback (most recent call last):\n"
        '  File "<console>", line 2, in <module>\n'
        "    1/0\n"
        "ZeroDivisionError: division by zero\n"
        "\nThe above exception was the direct cause of the following exception:\n\n"
        "Traceback (most recent call last):\n"
        '  File "<console>", line 4, in <module>\n'
        "    raise ValueError('v') from e\n"
        "ValueError: v\n"
    )


def test_frames_of_functions_typed_earlier_show_no_wrong_line() -> None:
    scope: dict[str, object] = {}
    exec(compile("def f():\n    return 1/0", "<console>", "exec"), scope)  # noqa: S102
    out = format_error(_raised("f()", scope), "f()")
    assert out == (
        "Traceback (most recent call last):\n"
        '  File "<console>", line 1, in <module>\n'
        "    f()\n"
        '  File "<console>", line 2, in f\n'
        "ZeroDivisionError: division by zero\n"
    )


def test_an_error_with_no_typed_frame_is_its_line_alone() -> None:
    assert format_error(KeyError("k")) == "KeyError: 'k'\n"
