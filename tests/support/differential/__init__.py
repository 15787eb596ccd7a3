"""The differential conformance suite's support: panelot.idb against Dexie 4.4.7.

The DSL. A *query spec* is JSON::

    {"table": "items",
     "source": {"where": "name", "clause": "startsWithIgnoreCase", "args": ["ap"]},
     "chain": [["reverse"], ["offset", 2], ["limit", 3],
               ["filter", {"field": "n", "op": ">", "value": 1}]],
     "run": "toArray"}

``source`` is ``{"where": index, "clause": name, "args": [...], "opts": {...}}`` (index
a name, ``":id"``, ``"[a+b]"`` or a list of fields), ``{"where": {field: value}}``,
``{"orderBy": index}`` or ``{}`` (``toCollection``); a table read is ``{"table", "op":
"get" | "bulkGet" | "tcount", "key" | "keys"}``. Chain steps are ``reverse``,
``offset``, ``limit``, ``filter``/``and`` (a predicate), ``until`` (predicate, include
stop entry), ``or`` (index, clause, args[, opts]) and ``distinct``. ``run`` is Dexie's
name of the final call (``toArray``, ``primaryKeys``, ``keys``, ``uniqueKeys``,
``first``, ``last``, ``firstKey``, ``lastKey``, ``count``, ``each``, ``sortBy`` with
``keyPath``). A *write spec* is ``{"op": ..., "table": ...}`` with Dexie's table writes
(``put``, ``add``, ``bulkPut``, ``bulkAdd``, ``update``, ``upsert``, ``bulkUpdate``,
``tdelete``, ``bulkDelete``, ``clear``) or a collection's ``modify``/``delete`` over
``query`` (a query spec without ``run``). Predicates are ``{"field": dotted path, "op":
"==" | "!=" | ">" | "<" | "startsWith" | "has" | "exists", "value": tagged}`` with the
same strict rules in both languages (no coercion between types).

Modules: ``gen`` (seeded generators), ``pyrun`` (the panelot runner, also copied into
Pyodide), ``jsrun`` (the Dexie runner), ``compare`` (exact comparison, the
DELIBERATE_DIFFERENCES table and the report).
"""

from differential.compare import DELIBERATE_DIFFERENCES, Report
from differential.gen import SCHEMA, Gen

__all__ = ["DELIBERATE_DIFFERENCES", "SCHEMA", "Gen", "Report"]
