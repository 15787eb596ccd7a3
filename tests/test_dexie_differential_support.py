"""The differential suite's own rules, in CPython.

Exact equality, tagged JSON, and each deliberate difference recognised on its case and
not on a near miss.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

from differential import DELIBERATE_DIFFERENCES, SCHEMA, Gen, pyrun
from differential.compare import deliberate, js_string, outcome_same, same
from differential.pyrun import decode, encode, predicate
from panelot.idb import MAX_KEY, MIN_KEY, parse_stores

SEED = {
    "items": [[1, {"name": "a", "id": 1}], [2, {"code": "b", "id": 2}]],
    "loose": [[1, {"v": 1}], ["1", {"v": 2}], [[1], {"v": 3}]],
    "words": [],
}


def test_same_is_exact() -> None:
    assert same([1, {"a": 2.0}], [1.0, {"a": 2}])
    assert not same(True, 1) and not same(0, {"$n": "-0"}) and not same(None, {})
    assert not same({"a": 1}, {"a": 1, "b": None}) and not same([1, 2], [2, 1])
    assert outcome_same({"error": "DataError", "message": "x"}, {"error": "DataError"})
    assert not outcome_same({"error": "ModifyError"}, {"error": "ConstraintError"})


def test_tagged_json_round_trips() -> None:
    values = [-0.0, math.inf, -math.inf, b"\x00\xff", datetime(2024, 1, 2, tzinfo=UTC), [1, "ß"]]
    for v in values:
        back = decode(encode(v))
        assert back == v and (
            not isinstance(v, float) or math.copysign(1, v) == math.copysign(1, back)
        )
    assert math.isnan(decode(encode(math.nan)))
    assert decode({"$k": "min"}) == MIN_KEY and decode({"$k": "max"}) == MAX_KEY


def test_predicates_do_not_coerce() -> None:
    assert predicate({"field": "n", "op": "==", "value": 1})({"n": 1.0})
    assert not predicate({"field": "n", "op": "==", "value": 1})({"n": True})
    assert not predicate({"field": "n", "op": ">", "value": 0})({"n": "3"})
    assert not predicate({"field": "a.b", "op": "exists"})({"a": "string"})
    assert predicate({"field": "a.b", "op": "exists"})({"a": {"b": None}})
    assert predicate({"field": "t", "op": "has", "value": "x"})({"t": [1, "x"]})


def test_js_string_collides_as_dexie_keys_do() -> None:
    assert js_string(1) == js_string("1") == js_string([1]) == "1"
    assert js_string([1, 2]) == js_string("1,2")
    # Dexie 4.4.7 reads a binary key's ArrayBuffer as '' + new Uint8Array(buffer)
    assert js_string({"$b": "0102"}) == js_string([1, 2]) == "1,2"
    assert js_string({"$b": "01"}) != js_string({"$b": "02"})
    assert js_string(1.5) == "1.5"


def _query(dexie: Any, panelot: Any, chain: list[Any]) -> dict[str, Any]:
    spec = {"table": "loose", "source": {"where": ":id", "clause": "equals", "args": [1]}}
    return {"phase": "query", "spec": {**spec, "chain": chain, "run": "toArray"},
            "dexie": {"ok": dexie}, "panelot": {"ok": panelot}, "before": None,
            "seed_state": SEED}  # fmt: skip


def test_or_distinct_dedup_is_recognised_only_when_keys_collide() -> None:
    or_step = [["or", "v", "above", [0]]]
    rows = [{"v": 1}, {"v": 2}, {"v": 3}]
    assert deliberate(_query([{"v": 1}], rows, or_step)) == "or_distinct_string_dedup"
    assert deliberate(_query([{"v": 1}], rows, [])) is None  # no or()/distinct()
    assert deliberate(_query([{"v": 9}], rows, or_step)) is None  # not a subsequence
    no_collision = {
        **_query([{"v": 1}], rows, or_step),
        "seed_state": {**SEED, "loose": SEED["items"]},
    }
    assert deliberate(no_collision) is None


def test_or_distinct_dedup_is_recognised_with_the_browser_cores_zero() -> None:
    """Seed 277968: a row of Dexie's holds -0, which the browser core reads as 0."""
    or_step = [["or", "v", "above", [0]]]
    rows = [{"v": 1}, {"v": 2}, {"v": 0}]
    case = {**_query([{"v": 1}, {"v": {"$n": "-0"}}], rows, or_step), "core": "browser"}
    assert deliberate(case) == "or_distinct_string_dedup"
    assert deliberate({**case, "core": "memory"}) is None  # the memory core keeps -0


def _delete(left: list[Any]) -> dict[str, Any]:
    spec = {"op": "delete", "table": "items",
            "query": {"table": "items", "source": {"orderBy": "name"}, "chain": []}}  # fmt: skip
    return {"phase": "write", "spec": spec, "dexie": {"ok": 2, "state": {"items": []}},
            "panelot": {"ok": 1, "state": {"items": left}}, "before": SEED, "seed_state": SEED}  # fmt: skip


def test_order_by_delete_is_recognised_only_for_unindexed_leftovers() -> None:
    assert deliberate(_delete([[2, {"code": "b", "id": 2}]])) == "order_by_delete_clears_unindexed"
    assert deliberate(_delete([[1, {"name": "a", "id": 1}]])) is None


def test_bulk_all_or_nothing_needs_the_same_error_and_an_unchanged_table() -> None:
    after = {**SEED, "items": [*SEED["items"], [3, {"id": 3}]]}
    case = {"phase": "write", "spec": {"op": "bulkAdd", "table": "items"}, "before": SEED,
            "dexie": {"error": "BulkError", "state": after},
            "panelot": {"error": "BulkError", "state": SEED}, "seed_state": SEED}  # fmt: skip
    assert deliberate(case) == "bulk_all_or_nothing"
    assert deliberate({**case, "panelot": {"error": "ConstraintError", "state": SEED}}) is None
    assert deliberate({**case, "panelot": {"error": "BulkError", "state": after}}) is None


def test_upsert_of_a_falsy_value_is_recognised_only_for_one() -> None:
    """Seed 110269: Dexie answers upsert with !!existing, False for a stored 0."""
    state = {**SEED, "loose": [*SEED["loose"], ["A", 0]]}
    spec = {"op": "upsert", "table": "loose", "key": "A", "changes": {"v": 1}}
    case = {"phase": "write", "spec": spec, "before": state, "seed_state": state,
            "dexie": {"ok": False, "state": state}, "panelot": {"ok": True, "state": state}}  # fmt: skip
    assert deliberate(case) == "upsert_answers_whether_it_existed"
    truthy = {**state, "loose": [*SEED["loose"], ["A", 5]]}
    assert deliberate({**case, "dexie": {"ok": False, "state": truthy},
                       "panelot": {"ok": True, "state": truthy}}) is None  # fmt: skip
    assert deliberate({**case, "spec": {**spec, "key": "B"}}) is None  # another record
    assert deliberate({**case, "panelot": {"ok": True, "state": SEED}}) is None


def test_a_set_clause_non_key_is_recognised_only_where_dexie_answers() -> None:
    """Issue 35, #12: where Dexie rejects a non-key, panelot must use its error name."""
    source = {"table": "items", "index": "n", "clause": "noneOf", "args": [[1, {"$n": "NaN"}]]}
    refused = {"error": "DataError", "message": "keys[1]: NaN is not a valid key"}
    case = {"phase": "query", "spec": {"query": {"source": source}},
            "dexie": {"ok": [1, 2]}, "panelot": refused}  # fmt: skip
    assert deliberate(case) == "set_clause_refuses_non_keys"
    for dexie_error in ("InvalidArgumentError", "TypeError"):
        assert deliberate({**case, "dexie": {"error": dexie_error}}) is None
    assert deliberate({**case, "spec": {"query": {"source": {**source, "args": [[1]]}}}}) is None


def test_every_deliberate_difference_has_a_reason() -> None:
    for name, entry in DELIBERATE_DIFFERENCES.items():
        assert entry.reason and callable(entry.applies), name


def test_generation_is_seeded_and_fits_the_schema() -> None:
    parse_stores(SCHEMA)
    everything = {f"where.{c}": True for c in pyrun.WHERE_CLAUSES}
    everything |= {f"collection.{c}": True for c in pyrun.COLLECTION_METHODS}
    everything |= {f"table.{c}": True for c in pyrun.TABLE_METHODS}
    everything |= {"form.dict": True, "form.list": True, "form.compound": True}
    a, b = Gen(7, everything), Gen(7, everything)
    assert a.data == b.data and [a.query() for _ in range(30)] == [b.query() for _ in range(30)]
    assert Gen(8, everything).data != a.data
    kinds = {f for _ in range(300) for f in a.query()["features"]}
    assert {"where.inAnyRange", "collection.or", "collection.until", "form.dict"} <= kinds
    nothing: dict[str, bool] = {"where.equals": True, "collection.toArray": True}
    for _ in range(40):
        spec = Gen(3, nothing).query()
        assert set(spec["features"]) <= {"where.equals", "collection.toArray", "table.get",
                                         "table.bulkGet", "table.tcount", "form.primary"}  # fmt: skip


def _put(dexie_ok: Any, panelot_ok: Any, dexie_id: Any, panelot_id: Any) -> dict[str, Any]:
    """Seed 628394823's shape: put {id: -0} into items (++id) on the memory core."""
    spec = {"op": "put", "table": "items", "value": {"id": {"$n": "-0"}, "t": [{"$n": "-0"}]}}
    row = {"t": [{"$n": "-0"}]}
    return {"phase": "write", "spec": spec, "core": "memory", "before": SEED, "seed_state": SEED,
            "dexie": {"ok": dexie_ok, "state": {"items": [[0, {**row, "id": dexie_id}]]}},
            "panelot": {"ok": panelot_ok, "state": {"items": [[0, {**row, "id": panelot_id}]]}}}  # fmt: skip


def test_a_negative_zero_key_answered_as_zero_is_recognised_only_with_equal_states() -> None:
    minus = {"$n": "-0"}
    assert deliberate(_put(minus, 0, 0, 0)) == "negative_zero_key_answered_as_zero"
    # the value read back must match: a generator's store injects the key 0 (the fix)
    assert deliberate(_put(minus, 0, 0, minus)) is None
    assert deliberate(_put(minus, 1, 0, 0)) is None  # another answer
    assert deliberate(_put(1, 0, 0, 0)) is None  # Dexie answered no -0
    browser = {**_put(minus, 0, 0, 0), "core": "browser"}
    browser["dexie"]["state"]["items"][0][1]["t"] = [minus]
    browser["panelot"]["state"]["items"][0][1]["t"] = [0]  # the browser core reads -0 as 0
    assert deliberate(browser) is not None
