"""The error classes: one base, IndexedDB/Dexie names, and their JSON shape."""

from __future__ import annotations

import panelot.idb as idb
from behavior import Ctx, raises
from panelot.idb import (
    BulkError,
    ConstraintError,
    DataError,
    ModifyError,
    PanelotError,
    SchemaError,
)

NAMES = [
    "AbortError",
    "ArgumentTypeError",
    "BulkError",
    "ConstraintError",
    "DataCloneError",
    "DataError",
    "DatabaseClosedError",
    "InvalidArgumentError",
    "InvalidStateError",
    "InvalidTableError",
    "ModifyError",
    "NotFoundError",
    "PrematureCommitError",
    "QuotaExceededError",
    "ReadOnlyError",
    "SchemaError",
    "TransactionInactiveError",
    "UnknownError",
    "UpgradeError",
    "ValidationError",
    "VersionError",
]


async def case_every_error_is_a_named_panelot_error(ctx: Ctx) -> None:
    exported = sorted(n for n in idb.__all__ if n.endswith("Error") and n != "PanelotError")
    assert exported == NAMES, exported
    assert PanelotError.name == "PanelotError"
    assert issubclass(PanelotError, Exception)
    for name in NAMES:
        cls = getattr(idb, name)
        assert issubclass(cls, PanelotError), name
        # Dexie names a wrong argument type TypeError; the class is a TypeError too.
        assert cls.name == {"ArgumentTypeError": "TypeError"}.get(name, name), (cls.name, name)
        assert cls.__doc__, name
        if cls is BulkError:
            err = cls("m", {})
        elif cls is ModifyError:
            err = cls("m", [], 0, [])
        else:
            err = cls("m")
        assert err.name == cls.name and err.message == "m" and str(err) == "m"
        assert isinstance(err, PanelotError)


async def case_to_json_shape(ctx: Ctx) -> None:
    assert DataError("bad key").to_json() == {"name": "DataError", "message": "bad key"}
    err = DataError("id: bad", field="id")
    assert err.field == "id"
    assert err.to_json() == {"name": "DataError", "message": "id: bad", "field": "id"}
    assert SchemaError("s").field is None
    bulk = BulkError(
        "2 failed",
        {3: ConstraintError("dup"), 0: DataError("bad", field="values[0].id")},
    )
    out = bulk.to_json()
    assert out == {
        "name": "BulkError",
        "message": "2 failed",
        "failures": {
            "0": {"name": "DataError", "message": "bad", "field": "values[0].id"},
            "3": {"name": "ConstraintError", "message": "dup"},
        },
    }, out
    assert list(out["failures"]) == ["0", "3"]
    assert BulkError("none", {}).to_json()["failures"] == {}


async def case_raised_errors_carry_names_and_json(ctx: Ctx) -> None:
    db = await ctx.open({"t": "id, &u"})
    t = db.table("t")
    await t.bulk_put([{"id": 1, "u": "a"}, {"id": 2, "u": "b"}])
    err = await raises(
        BulkError, t.bulk_add([{"id": 1}, {"id": 3}, {"id": 4, "u": "a"}, {"id": 2}])
    )
    out = err.to_json()  # type: ignore[attr-defined]
    assert out["name"] == "BulkError"
    assert sorted(out["failures"]) == ["0", "2", "3"], out
    assert {f["name"] for f in out["failures"].values()} == {"ConstraintError"}
    assert await t.get(3) is None  # all-or-nothing: the good item was rolled back too
    err = await raises(ConstraintError, t.add({"id": 1}))
    assert err.to_json()["name"] == "ConstraintError"  # type: ignore[attr-defined]
    err = await raises(DataError, t.put({"id": None}))
    j = err.to_json()  # type: ignore[attr-defined]
    assert j["name"] == "DataError" and j["field"].endswith("id"), j
