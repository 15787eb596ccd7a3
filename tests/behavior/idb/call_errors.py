"""Errors a call raises before it returns, made awaitable for :func:`behavior.raises`."""

from __future__ import annotations


async def lazy(make: object) -> object:
    """Raise from a call that fails before it returns a collection, as an awaitable.

    ``await raises(DataError, lazy(lambda: t.to_collection().until(3)))``: the call runs
    when ``raises`` awaits it, so its error is caught there.
    """
    assert callable(make)
    return make()
