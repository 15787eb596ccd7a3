"""The browser core's snapshot of a write's values: marshal data, read into JS objects.

A write must capture its values when it is called. Copying them in Python (with the
checks :func:`~panelot.idb.values.clone_value` makes) and then encoding them as JSON
for the JS side cost ~120 + ~90 ms for 10,000 records under Pyodide. ``marshal.dumps``
walks them in C instead (~8 ms), and the helper's marshal reader
(``web/marshal_reader.mjs``) builds the JS records from those bytes at once (~45 ms,
against ~25 ms for ``JSON.parse`` of the same records).

marshal takes more than a record may hold (sets, complex numbers, ``int`` keys, huge
integers) and less (dates, JS handles, subclasses of the plain types). The reader
refuses the former, marshal the latter, and either way the values take the exact
path: :func:`~panelot.idb.values.clone_values`, which refuses what cannot be stored
with an error that names the field, or copies what can (a value holding the same
object twice, which the reader also refuses, is copied as separate objects).
"""

from __future__ import annotations

import marshal
from collections.abc import Sequence
from typing import Any

from pyodide.ffi import to_js

from panelot.idb.browser.convert import JsValues
from panelot.idb.values import clone_values

__all__ = ["JsValues", "snapshot_values"]

FEW = 8
"""Writes of fewer values keep the deep copy and JSON: the reader's call returns a JS
array to Python (a new JsProxy), which costs more than the copy saves for a record or
two (measured: receipts 1.18x -> 1.05x Dexie, appends through the bus 1.14x -> 1.02x)."""


def snapshot_values(values: Sequence[Any], unmarshal: Any) -> Sequence[Any]:
    """The values as JS objects built from their marshal data, or Python deep copies.

    ``unmarshal`` is the helper's ``unmarshalValues``. Raises
    :class:`~panelot.idb.errors.DataCloneError` for a value that cannot be stored.
    """
    if len(values) < FEW:
        return clone_values(values)
    try:
        data = marshal.dumps(values if type(values) is list else list(values))
    except ValueError:  # a type marshal does not take, or nested beyond its limit
        return clone_values(values)
    built = unmarshal(to_js(data))
    if built is None:
        return clone_values(values)
    return JsValues(built, len(values))
