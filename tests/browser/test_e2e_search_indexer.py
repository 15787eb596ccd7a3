"""End-to-end: one search indexer per origin, elected by the Web Lock ``panelot-search-indexer``.

Two side panels of one profile: the first to open the store holds the lock and indexes;
the second only queries (its indexer never runs a batch) and still finds, live, what
it appends. When the first panel closes, its lock goes with it: the second is granted
it, catches up (start-up, as when a store opens) and runs batches of its own from
then on. Each wait is for the state that proves its own step landed.
"""

from __future__ import annotations

import time
from typing import Any

from playwright.sync_api import Page

from panelot.testing import ExtensionContext, PageStore

#: How long a panel may take to index or take over on a loaded machine.
WAIT_MS = 30_000

INDEXER = """() => {
  const s = window.panelot.py.pyimport("panelot.runtime").store().search;
  return { indexing: s.indexing, batches: s.batches };
}"""


def indexer(page: Page) -> dict[str, Any]:
    """The page's indexer: ``{indexing, batches}``."""
    return dict(page.evaluate(INDEXER))


#: Whether the page's ``search.messages`` for ``words`` finds node ``id``.
FOUND = """async ([words, id]) => {
  const found = await window.panelot.query("search.messages", { text: words });
  return found.hits.some((hit) => hit.nodeId === id);
}"""


def wait_found(page: Page, words: str, node_id: str) -> None:
    """Wait until the page's ``search.messages`` for ``words`` finds ``node_id``.

    Polled from here: ``wait_for_function`` does not await a predicate's promise (a
    promise is truthy), so an async predicate would pass at once.
    """
    deadline = time.monotonic() + WAIT_MS / 1000
    while not page.evaluate(FOUND, [words, node_id]):
        assert time.monotonic() < deadline, f"search.messages never found {node_id} ({words!r})"
        time.sleep(0.1)


def test_one_panel_indexes_and_the_other_takes_over_when_it_closes(
    panelot_context: ExtensionContext,
) -> None:
    a = panelot_context.open_panel()
    a.wait_for_function(f"() => ({INDEXER})().indexing", timeout=WAIT_MS)
    b = panelot_context.open_panel()
    mine, theirs = PageStore(a, client_id="a"), PageStore(b, client_id="b")
    assert indexer(b)["indexing"] is False

    thread = theirs.seed_thread(title="Zoo")
    first = theirs.seed_turn(thread, "A marmot?", reply="A marmot, asleep.")
    wait_found(b, "marmot", first)
    assert indexer(b) == {"indexing": False, "batches": 0}  # found through A's index
    assert mine.query("search.messages", {"text": "marmot"})["hits"]

    a.close()  # the holder goes: B is granted the lock, catches up, and indexes
    b.wait_for_function(f"() => ({INDEXER})().indexing", timeout=WAIT_MS)
    later = theirs.seed_turn(thread, "An ocelot?", reply="An ocelot, awake.")
    wait_found(b, "ocelot", later)
    b.wait_for_function(f"() => ({INDEXER})().batches > 0", timeout=WAIT_MS)  # B's own batch
