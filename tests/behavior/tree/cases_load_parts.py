"""Loading a long thread in parts: every node, in seq order, whatever the seqs are.

A thread's first ``FIRST_NODES`` nodes come with the thread in one round trip; the rest
is read as several ``[threadId+seq]`` reads at once, split by guessing that seqs are
dense. These cases store threads past that size with dense, sparse, fractional,
repeated and non-numeric seqs, and check that the load returns exactly the records a
plain ``threadId`` read returns, in (seq, id) order, and that context and check agree.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from behavior import Ctx
from behavior.payloads import answer, text
from panelot.store import PanelotStore
from panelot.tree.loading import load_thread
from panelot.tree.nodes import TREE_TABLES
from panelot.tree.reading import FIRST_NODES, PART_NODES, load_thread_records


def _chain(tid: str, seqs: list[Any]) -> list[dict[str, Any]]:
    """A linear thread over ``seqs`` (ids in seq order, ASCII: IndexedDB orders them alike)."""
    nodes, parent = [], None
    for i, seq in enumerate(seqs):
        kind, payload = (
            ("user_message", text(f"m{i}"))
            if i % 2 == 0
            else ("assistant_message", answer(f"m{i}"))
        )
        ident = f"n{i:06d}"
        nodes.append(
            {
                "id": ident,
                "threadId": tid,
                "parentId": parent,
                "seq": seq,
                "ts": i,
                "type": kind,
                "payload": payload,
            }
        )
        parent = ident
    return nodes


async def _stored_thread(store: PanelotStore, seqs: list[Any]) -> tuple[str, list[dict[str, Any]]]:
    tid = await store.create_thread("long")
    nodes = _chain(tid, seqs)
    await store.db.table("nodes").bulk_put(nodes)
    await store.db.table("threads").update(tid, {"leafId": nodes[-1]["id"]})
    return tid, nodes


async def _loaded(store: PanelotStore, tid: str) -> list[Any]:
    async def body(tx: Any) -> list[Any]:
        _, rows = await load_thread_records(tx, tid)
        return rows

    return await store.db.transaction("r", TREE_TABLES, body)


def _in_key_order(nodes: list[dict[str, Any]]) -> list[str]:
    return [n["id"] for n in sorted(nodes, key=lambda n: (n["seq"], n["id"]))]


async def _check(store: PanelotStore, seqs: list[Any], order: Callable[..., list[str]]) -> None:
    tid, nodes = await _stored_thread(store, seqs)
    rows = await _loaded(store, tid)
    assert sorted(r["id"] for r in rows) == sorted(n["id"] for n in nodes)  # none lost or twice
    assert [r["id"] for r in rows] == order(nodes)
    loaded = await load_thread(store.db, tid)
    assert loaded.problem is None and not loaded.index.problems
    assert loaded.path == [n["id"] for n in nodes]
    out = await store.context(tid)
    assert out["path"] == [n["id"] for n in nodes] and len(out["messages"]) == len(nodes)
    assert (await store.query("thread.check", {"threadId": tid}))["ok"]


async def case_a_long_thread_loads_whole_in_parts(ctx: Ctx) -> None:
    store = await ctx.store()
    count = FIRST_NODES + 5 * PART_NODES + 17  # several parts, the last one short
    await _check(store, list(range(1, count + 1)), _in_key_order)


async def case_sparse_and_fractional_seqs_load_whole(ctx: Ctx) -> None:
    store = await ctx.store()
    count = FIRST_NODES + 3 * PART_NODES
    # Gaps make the guessed parts uneven (most records fall in the last, open one).
    await _check(store, [i * 37 for i in range(1, count + 1)], _in_key_order)
    # Fractional seqs, and the last ones far past every guessed part.
    seqs = [i + 0.25 * (i % 4) for i in range(count)]
    seqs[-40:] = [10**12 + i for i in range(40)]
    await _check(store, seqs, _in_key_order)


async def case_a_seq_repeated_across_the_first_read_still_loads_whole(ctx: Ctx) -> None:
    # Records with the seq the first round trip ends on may be cut between the two reads:
    # the count says so, and the plain threadId read takes over.
    store = await ctx.store()
    count = FIRST_NODES + PART_NODES
    seqs: list[Any] = list(range(1, count + 1))
    for i in range(FIRST_NODES - 3, FIRST_NODES + 3):
        seqs[i] = FIRST_NODES  # six records share the seq at the boundary
    await _check(store, seqs, _in_key_order)


async def case_seqs_that_are_not_numbers_after_the_first_read_load_whole(ctx: Ctx) -> None:
    # Strings and dates are keys too (after numbers): the rest is then one open read, and
    # check reports them.
    store = await ctx.store()
    count = FIRST_NODES + 300
    seqs: list[Any] = [
        *range(1, FIRST_NODES),
        *(f"s{i:04d}" for i in range(count - FIRST_NODES + 1)),
    ]
    tid, nodes = await _stored_thread(store, seqs)
    rows = await _loaded(store, tid)
    assert [r["id"] for r in rows] == [n["id"] for n in nodes]  # numbers, then the strings
    report = await store.query("thread.check", {"threadId": tid})
    invalid = [p for p in report["problems"] if p.endswith("has an invalid seq")]
    assert len(invalid) == count - FIRST_NODES + 1
