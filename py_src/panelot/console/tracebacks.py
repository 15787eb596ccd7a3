"""The console's tracebacks, trimmed to the code the user typed.

An error raised inside a helper or the store would otherwise print every frame of the
runtime it passed through (files the user never wrote, without their source lines) and
any exception it happened to be raised while handling (``During handling of the above
exception...``), whose message may hold a whole query result. A console traceback shows
only the frames of typed input (file ``<console>``), each with its line as typed, then
the error line; a chained cause or context is shown only when it too was raised in typed
input (a ``try``/``raise ... from`` of the user's own).
"""

from __future__ import annotations

import linecache
import traceback
from types import CodeType, TracebackType

__all__ = ["format_error"]

_CAUSE = "\nThe above exception was the direct cause of the following exception:\n\n"
_CONTEXT = "\nDuring handling of the above exception, another exception occurred:\n\n"


def _typed_frames(tb: TracebackType | None, filename: str) -> list[tuple[CodeType, int]]:
    return [
        (frame.f_code, lineno)
        for frame, lineno in traceback.walk_tb(tb)
        if frame.f_code.co_filename == filename
    ]


def _codes_of(code: CodeType) -> set[CodeType]:
    """``code`` and every code object compiled with it (comprehensions, defs, lambdas)."""
    found = {code}
    for const in code.co_consts:
        if isinstance(const, CodeType):
            found |= _codes_of(const)
    return found


def _block(exc: BaseException, typed: list[str] | None, filename: str) -> str:
    frames = _typed_frames(exc.__traceback__, filename)
    error = "".join(traceback.format_exception_only(type(exc), exc))
    if not frames:
        return error
    # A line number of the statement being run indexes ``typed``; a frame of a function
    # typed earlier has its own lines, which only the line cache may still hold.
    current = _codes_of(frames[0][0]) if typed is not None else set()
    lines = ["Traceback (most recent call last):\n"]
    for code, lineno in frames:
        lines.append(f'  File "{filename}", line {lineno}, in {code.co_name}\n')
        if typed is not None and code in current:
            text = typed[lineno - 1] if 0 < lineno <= len(typed) else ""
        else:
            text = linecache.getline(filename, lineno) if typed is None else ""
        if text.strip():
            lines.append(f"    {text.strip()}\n")
    return "".join(lines) + error


def format_error(exc: BaseException, typed: str | None = None, filename: str = "<console>") -> str:
    """The traceback of ``exc`` as the console prints it: typed frames and the error line.

    ``typed`` is the statement as the user typed it (its lines are shown for its frames);
    without it, lines come from the line cache.
    """
    typed_lines = typed.split("\n") if typed is not None else None
    chain = [exc]
    links: list[str] = []
    seen = {id(exc)}
    while True:
        newest = chain[-1]
        if newest.__cause__ is not None:
            older, link = newest.__cause__, _CAUSE
        elif newest.__context__ is not None and not newest.__suppress_context__:
            older, link = newest.__context__, _CONTEXT
        else:
            break
        if id(older) in seen or not _typed_frames(older.__traceback__, filename):
            break  # raised inside the runtime, not by the typed code: not shown
        seen.add(id(older))
        chain.append(older)
        links.append(link)
    blocks = [_block(e, typed_lines, filename) for e in reversed(chain)]
    out = blocks[0]
    for link, block in zip(reversed(links), blocks[1:], strict=True):
        out += link + block
    return out
