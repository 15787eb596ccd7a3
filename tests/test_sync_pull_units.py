"""Units of a pull's rules (panelot.sync.merge, .resolve, .fetch, .pull): pure functions.

The behaviour cases (tests/behavior/sync/cases_pull.py) run them against a real server;
these pin each rule on its own: the winning leaf, conflicting leaves merged the same
whatever order they come in, a resolution's deterministic revisions, thread fields by
clock with a local change winning, append-only nodes with tombstones winning, library
records by clock, the leaf settled, a leaf's shape checked, where a pull starts.
"""

from __future__ import annotations

import itertools
import json
import urllib.parse
from typing import Any

from loops import run_async
from panelot.errors import NetworkError
from panelot.host.http import HttpRequest, HttpResponse
from panelot.sync.apply import Incoming
from panelot.sync.clock import Hlc
from panelot.sync.couch import MAX_ANSWER_DEPTH, Couch, nesting
from panelot.sync.fetch import (
    CHANGES_LIMIT,
    MAX_DOC_DEPTH,
    check_leaf,
    json_problem,
    read_changes,
    read_leaves,
)
from panelot.sync.merge import (
    early_leaf,
    known_with_leaf,
    library_wins,
    merge_leaves,
    merge_node,
    merge_thread,
    settle_leaf,
    winner,
)
from panelot.sync.pull import FUTURE_MS, _see, _since
from panelot.sync.resolve import MERGED, resolution
from panelot.sync.revs import next_rev
from panelot.sync.server import Target
from panelot.tree.integrity import index_nodes

C1, C2, C3 = "1700000000001-0000-a", "1700000000002-0000-b", "1700000000003-0000-a"


def _thread_leaf(rev: str, title: str, tags: list[str], clocks: dict[str, str]) -> dict[str, Any]:
    record = {"id": "t", "title": title, "tags": tags, "createdAt": 5, "updatedAt": int(rev[0])}
    return {"_id": "threads:t", "_rev": rev, "table": "threads", "v": 1, "record": record,
            "clocks": clocks}  # fmt: skip


def test_the_winner_is_live_then_longest_then_highest_rev() -> None:
    leaves = [
        {"_rev": "3-aa", "_deleted": True},
        {"_rev": "2-ff"},
        {"_rev": "2-0b"},
    ]
    assert winner(leaves)["_rev"] == "2-ff"
    assert winner([{"_rev": "1-a", "_deleted": True}])["_rev"] == "1-a"


def test_conflicting_thread_leaves_merge_by_field_clock_in_any_order() -> None:
    left = _thread_leaf("2-aa", "Left", ["l"], {"title": C3, "tags": C1})
    right = _thread_leaf("3-bb", "Right", ["r"], {"title": C2, "tags": C2})
    results = [
        merge_leaves("threads", list(order)) for order in itertools.permutations([left, right])
    ]
    assert results[0] == results[1]
    merged = results[0]
    assert merged["record"]["title"] == "Left" and merged["record"]["tags"] == ["r"]
    assert merged["clocks"] == {"title": C3, "tags": C2}
    assert merged["_rev"] == "3-bb" and merged["record"]["updatedAt"] == 3


def test_conflicting_node_leaves_keep_the_tombstone_and_library_the_newer_clock() -> None:
    live = {"_rev": "2-ff", "record": {"id": "n", "payload": {"content": []}}}
    tomb = {"_rev": "2-00", "record": {"id": "n", "payload": {"content": [], "deleted": True}}}
    assert merge_leaves("nodes", [live, tomb])["record"]["payload"]["deleted"] is True
    old = {"_rev": "2-ff", "record": {"id": "m", "value": "old"}, "clocks": {"record": C1}}
    new = {"_rev": "2-00", "record": {"id": "m", "value": "new"}, "clocks": {"record": C2}}
    assert merge_leaves("memories", [old, new])["record"]["value"] == "new"


def test_a_resolution_is_the_same_on_every_device() -> None:
    def made() -> list[dict[str, Any]]:
        item = Incoming("threads:t", "threads", "t", "3-bb", False)
        item.record, item.clocks, item.losers = {"id": "t", "title": "x"}, {"title": C1}, ["2-aa"]
        return resolution(item)

    first, second = made(), made()
    assert first == second
    merged, loser = first
    assert merged["_rev"].startswith("4-") and merged["_revisions"]["ids"][1] == "bb"
    assert loser["_deleted"] is True and loser[MERGED] is True
    assert loser["_rev"] == next_rev("2-aa", True, {MERGED: True})
    body = {
        "table": "threads",
        "v": 1,
        "record": {"id": "t", "title": "x"},
        "clocks": {"title": C1},
    }
    assert merged["_rev"] == next_rev("3-bb", False, body)  # anyone can recompute it
    assert resolution(Incoming("nodes:n", "nodes", "n", "1-a", False)) == []  # no conflict


def test_thread_fields_merge_by_clock_and_a_local_change_wins() -> None:
    local = {"id": "t", "title": "mine", "pinned": True, "createdAt": 3, "updatedAt": 9,
             "stats": {"turns": 1}}  # fmt: skip
    known = {"fields": {"title": "before", "pinned": True}, "clocks": {"title": C1}}
    remote = {"id": "t", "title": "theirs", "pinned": False, "createdAt": 1, "updatedAt": 7}
    merged = merge_thread(local, known, remote, {"title": C2, "pinned": C2})
    assert merged["title"] == "mine"  # changed here since the last sync: pushed with a newer clock
    assert merged["pinned"] is False  # unchanged here: the server's
    assert merged["createdAt"] == 1 and merged["updatedAt"] == 9
    assert merged["stats"] == {"turns": 1}  # local fields stay (recomputed by the caller)
    # A thread new here is the server's, with no origin approved (scopeOrigins is local).
    assert merge_thread(None, None, remote, {}) == {**remote, "scopeOrigins": []}


def test_without_a_sync_state_the_newer_side_wins() -> None:
    local = {"id": "t", "title": "mine", "updatedAt": 1_800_000_000_000}
    remote = {"id": "t", "title": "theirs", "updatedAt": 1}
    assert merge_thread(local, None, remote, {"title": C1})["title"] == "mine"
    stale = {**local, "updatedAt": 1}
    assert merge_thread(stale, None, remote, {"title": C1})["title"] == "theirs"


def test_nodes_are_append_only_and_a_tombstone_wins() -> None:
    node = {"id": "n", "payload": {"content": [{"type": "text", "text": "x"}]}}
    tomb = {"id": "n", "payload": {"content": [], "deleted": True}}
    assert merge_node(None, node) == node
    assert merge_node(node, tomb) == tomb
    assert merge_node(tomb, node) is None  # the local tombstone stays
    assert merge_node(node, node) is None


def test_library_records_take_the_newer_clock_unless_changed_here() -> None:
    known = {"clocks": {"record": C2}}
    assert library_wins(None, False, None, {"record": C1})
    assert library_wins({"id": "m"}, False, known, {"record": C3})
    assert not library_wins({"id": "m"}, False, known, {"record": C1})
    assert not library_wins({"id": "m"}, True, known, {"record": C3})


def _node(nid: str, parent: str | None, seq: int) -> dict[str, Any]:
    return {"id": nid, "threadId": "t", "parentId": parent, "seq": seq, "ts": seq,
            "type": "user_message" if seq % 2 else "assistant_message",
            "payload": {"content": [{"type": "text", "text": nid}]}}  # fmt: skip


def test_the_leaf_waits_for_its_node_and_follows_pulled_nodes_down_its_branch() -> None:
    nodes = [_node("a", None, 1), _node("b", "a", 2), _node("c", "b", 3), _node("x", "a", 3)]
    index = index_nodes("t", nodes)
    assert settle_leaf(index, "missing", "b", []) == "b"  # not here yet: the local leaf
    assert settle_leaf(index, "b", "a", ["c"]) == "c"  # pulled c extends b's branch
    assert settle_leaf(index, "x", "b", ["c"]) == "x"  # x is on another branch
    assert settle_leaf(index, None, None, []) in {"c", "x"}


def test_a_server_leaf_whose_node_is_not_here_is_early_and_the_kept_leaf_no_change() -> None:
    row = {"id": "threads:t", "rev": "2-a", "fields": {"title": "T", "leafId": "later"}}
    assert early_leaf(row, {"a", "b"}, "b") == "later"  # its node has not come yet
    assert early_leaf(row, {"a", "later"}, "b") is None
    assert early_leaf(None, set(), "b") is None
    assert early_leaf({**row, "deleted": True}, set(), "b") is None
    assert early_leaf({**row, "fields": {"title": "T"}}, set(), "b") is None  # no leaf named
    assert early_leaf({**row, "keptLeaf": "b"}, {"a", "b"}, "b") == "later"  # still kept
    assert early_leaf({**row, "keptLeaf": "b"}, {"a", "b", "c"}, "c") is None  # moved here
    assert early_leaf({**row, "keptLeaf": None}, {"a", "b"}, "b") is None  # changed here
    kept = known_with_leaf(row, "b")
    assert kept is not None and kept["fields"] == {"title": "T", "leafId": "b"}
    assert row["fields"]["leafId"] == "later"  # the state's row itself is left alone
    local = {"id": "t", "title": "T", "leafId": "b", "updatedAt": 1}
    remote = {"id": "t", "title": "T", "leafId": "later2", "updatedAt": 2}
    # The kept leaf is not a local change: the server's newer leaf is merged in.
    assert merge_thread(local, kept, remote, {"leafId": C1})["leafId"] == "later2"
    assert merge_thread(local, row, remote, {"leafId": C1})["leafId"] == "b"  # vs the raw row


def test_seq_collisions_are_read_in_seq_then_id_order() -> None:
    index = index_nodes("t", [_node("z", None, 1), _node("b", "z", 2), _node("a", "z", 2)])
    assert list(index.nodes) == ["z", "a", "b"]
    assert index.children["z"] == ["a", "b"]


def test_a_leaf_of_the_wrong_shape_is_a_reason() -> None:
    good = {"_id": "nodes:n", "_rev": "1-a", "table": "nodes", "v": 1, "record": {"id": "n"}}
    assert check_leaf("nodes:n", good) is None
    assert check_leaf("nodes:n", {**good, "record": "x"}) is not None
    assert check_leaf("nodes:n", {**good, "record": {"id": "other"}}) is not None
    assert check_leaf("nodes:n", {**good, "_rev": "bad"}) is not None
    assert check_leaf("nodes:n", {**good, "table": "threads"}) is not None
    assert check_leaf("nodes:n", {"_id": "nodes:n", "_rev": "2-b", "_deleted": True}) is None
    memory = {"_id": "memories:m", "_rev": "1-a", "table": "memories", "v": 1,
              "record": {"id": "m"}}  # fmt: skip
    assert check_leaf("memories:m", memory) is not None  # a library record needs its clock
    assert check_leaf("memories:m", {**memory, "clocks": {"record": C1}}) is None


def test_a_leaf_of_another_revision_too_deep_or_with_nan_is_a_reason() -> None:
    good = {"_id": "nodes:n", "_rev": "1-a", "table": "nodes", "v": 1, "record": {"id": "n"}}
    assert check_leaf("nodes:n", good, ["1-a"]) is None
    assert "asked" in str(check_leaf("nodes:n", good, ["2-b"]))
    deep: Any = 1
    for _ in range(MAX_DOC_DEPTH):
        deep = [deep]
    assert json_problem(deep) is None  # MAX_DOC_DEPTH levels: accepted
    assert "nested" in str(json_problem([deep]))
    very: Any = 1
    for _ in range(100_000):  # far deeper than Python recurses: a reason, no crash
        very = {"x": very}
    assert "nested" in str(check_leaf("nodes:n", {**good, "record": {"id": "n", "p": very}}))
    assert "NaN" in str(json_problem({"a": [1.5, float("nan")]}))
    assert "NaN" in str(json_problem({"a": float("-inf")}))


def test_an_answer_s_nesting_is_counted_outside_strings() -> None:
    assert nesting(b'{"a": [1, {"b": "[[[[\\"[["}], "c": {}}') == 3
    assert nesting(b'["a\\\\", ["]]"]]') == 2  # an escaped backslash ends no string early
    assert nesting(b"") == 0 and nesting(b"[" * 100_000 + b"]" * 100_000) == 100_000
    deep = b"[" * (MAX_ANSWER_DEPTH + 1) + b"]" * (MAX_ANSWER_DEPTH + 1)

    async def http(req: HttpRequest) -> HttpResponse:
        return HttpResponse(200, {}, deep)

    couch = Couch(http, Target("http://127.0.0.1:1", "db"), None)
    try:
        run_async(couch.call("GET", "/_changes"))
    except NetworkError as exc:
        assert f"nested deeper than {MAX_ANSWER_DEPTH}" in str(exc)
    else:
        raise AssertionError("no error")


def test_a_malformed_bulk_get_answer_is_a_network_error() -> None:
    for answer in ({"results": "x"}, [], {"results": [{"id": 5, "docs": []}]}):
        couch = _fake_couch({"/_bulk_get": (200, answer)}, [])
        try:
            run_async(read_leaves(couch, {"nodes:n": ["1-a"]}))
        except NetworkError as exc:
            assert "_bulk_get" in str(exc)
        else:
            raise AssertionError(f"no error for {answer!r}")


def test_a_pull_starts_from_the_checkpoint_both_sides_hold() -> None:
    assert _since({"last_seq": 7}, {"since": 7}) == 7
    assert _since({"last_seq": 9}, {"since": 7}) == 7
    assert _since(None, {"since": 7}) == 0
    assert _since({"last_seq": "7-g1"}, {"since": "9-g1"}) == 0


def _fake_couch(answers: dict[str, tuple[int, Any]], seen: list[str]) -> Couch:
    """A ``Couch`` over an in-process fake: each path (without the query) answers as given."""

    async def http(req: HttpRequest) -> HttpResponse:
        seen.append(f"{req.method} {req.url}")
        path = urllib.parse.urlsplit(req.url).path.split("/db", 1)[1]
        status, body = answers.get(path, (404, {"error": "not_found"}))
        return HttpResponse(status, {}, json.dumps(body).encode())

    return Couch(http, Target("http://127.0.0.1:1", "db"), None)


def test_a_server_without_bulk_get_is_asked_for_open_revs() -> None:
    leaf = {"_id": "nodes:n", "_rev": "1-a", "table": "nodes", "v": 1, "record": {"id": "n"}}
    seen: list[str] = []
    couch = _fake_couch({"/nodes:n": (200, [{"ok": leaf}, {"missing": "2-b"}])}, seen)
    found = run_async(read_leaves(couch, {"nodes:n": ["1-a", "2-b"]}))
    assert found == {"nodes:n": [leaf]}
    assert seen[0].startswith("POST ") and "_bulk_get" in seen[0]
    assert "open_revs=" in seen[1] and urllib.parse.unquote(seen[1]).endswith('["1-a","2-b"]')


def test_changes_are_read_page_by_page_and_other_ids_skipped() -> None:
    page = [
        {"id": f"nodes:n{i}", "seq": i + 1, "changes": [{"rev": "1-a"}, {"rev": "1-b"}]}
        for i in range(CHANGES_LIMIT)
    ]
    pages = iter([page, [{"id": "_design/x", "seq": 999, "changes": [{"rev": "1-c"}]}]])
    seen: list[str] = []

    async def http(req: HttpRequest) -> HttpResponse:
        seen.append(req.url)
        results = next(pages)
        body = {"results": results, "last_seq": results[-1]["seq"]}
        return HttpResponse(200, {}, json.dumps(body).encode())

    couch = Couch(http, Target("http://127.0.0.1:1", "db"), None)
    changed, last = run_async(read_changes(couch, 0))
    assert len(changed) == CHANGES_LIMIT and changed["nodes:n0"] == ["1-a", "1-b"]
    assert last == 999 and len(seen) == 2 and f"since={CHANGES_LIMIT}" in seen[1]


def test_a_far_future_clock_from_the_server_does_not_take_the_device_clock_along() -> None:
    hlc = Hlc("dev", 1_700_000_000_000, 0)
    now = 1_700_000_000_000
    _see(hlc, f"{now + FUTURE_MS + 1:013d}-0000-evil", now)
    assert hlc.ms == now
    _see(hlc, f"{now + 5:013d}-0003-peer", now)
    assert (hlc.ms, hlc.counter) == (now + 5, 3)
    _see(hlc, "not a clock", now)
    assert hlc.tick(now) == f"{now + 5:013d}-0004-dev"
