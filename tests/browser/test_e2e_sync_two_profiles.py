"""Two browser profiles syncing through the server, both side panels open (issue 39).

Profiles A and B are two separate Chromium profiles (two launcher contexts, each with
its own ``panelot_v1``), each with a side panel open and the stub provider saved, both
syncing with the same fresh database of the open test server
(tests/support/couch_server.cjs): A through Settings → Sync like a user, B with
``sync.configure`` and ``sync.start`` through its panel's store. Both loops run
(``sync.status``: running and syncing: each profile has its own ``panelot-sync`` lock).

* Online, acting in one panel as a user does (the + button, the composer, Edit,
  Regenerate, the version arrows, the conversation's menu, Delete on a message, a file
  chosen in the composer), the other panel shows the result with no click: a new
  thread in its list, the reply, the edited branch and the regenerated version (their
  ``n/m``), the switched branch, the new title, the pin, a message's tombstone, the
  attachment's bytes (``attachment.get``), a thread deleted (its conversation closes
  and its row vanishes).
* Offline on both (``sync.stop`` in each), the same thread renamed differently and
  appended to on both; once both loops start again (``sync.start``), every synced table
  is the same on both, record by record, minus what stays on the device
  (:func:`panelot.sync.mapping.local_view`), both show the same title and the merged
  leaf, the two offline questions as two versions at one place, and every node written
  on either side exists on both.

This test found the early-leaf defect (docs/sync.md "Merges", the leaf): B pulled A's
edited thread before its nodes, kept its leaf, and pushed that leaf back with a newer
clock, so both profiles ended on the branch before the edit (about one run in ten);
tests/behavior/sync/cases_leaf.py pins the rule.

Every wait is for the state the test's own action causes, with a generous timeout (the
loop pushes within a second of a commit and pulls on a long-poll); a wait that times out
says what each profile has.
"""

from __future__ import annotations

import base64
import json
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from playwright.sync_api import Page
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from behavior.sync import OPEN_ENV
from e2e_support import confirm
from panelot.sync.docid import SYNCED_TABLES
from panelot.sync.mapping import local_view
from panelot.testing import (
    ExtensionContext,
    Launcher,
    PageStore,
    StubProvider,
    attach,
    configure_provider,
    edit_message,
    last_id,
    new_thread,
    open_thread,
    send_message,
    to_list,
    wait_reply,
)

#: How long the other profile may take to show what one committed (a push within a
#: second, a pull on the long-poll; room for a loaded machine).
SYNC_S = 90.0
SYNC_MS = SYNC_S * 1000
#: A file's bytes, every byte value (the attachment's bytes must arrive unchanged).
FILE_BYTES = bytes(range(256)) * 4 + "é ✓".encode()


@dataclass(frozen=True)
class Profile:
    """One profile's side panel and its store handle."""

    name: str
    page: Page
    store: PageStore


def _new_database(server: str) -> str:
    name = f"panelot-two-{uuid.uuid4().hex[:10]}"
    request = urllib.request.Request(f"{server}/{name}", method="PUT")  # noqa: S310
    with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - loopback
        assert response.status in (201, 202), response.status
    return name


def _syncing(status: dict[str, Any]) -> bool:
    return bool(status["running"] and status["syncing"])


def _describe(profile: Profile, thread_id: str | None) -> str:
    """What a profile has: its sync status, its threads, the nodes of ``thread_id``."""
    store = profile.store
    status = store.query("sync.status")
    loop = {k: status.get(k) for k in ("running", "syncing", "waiting", "lastError")}
    threads = [
        (t["id"], t.get("title"), t.get("pinned"), t.get("leafId")) for t in store.raw("threads")
    ]
    said = f"{profile.name}: sync {loop}; threads {threads}"
    if thread_id is not None:
        nodes = [
            (n["id"], n["type"], n["payload"].get("deleted", False))
            for n in store.raw_nodes(thread_id)
        ]
        said += f"; nodes of {thread_id}: {nodes}"
        if profile.page.evaluate("() => window.panelotApp.chat.threadId") == thread_id:
            shown = profile.page.evaluate(
                "() => [...document.querySelectorAll('#messages .msg[data-node-id]')]"
                ".map((el) => [el.dataset.nodeId, el.querySelector('.branch-pos')?.textContent])"
            )
            said += f"; shown: {shown}"
    return said


def _wait(
    profile: Profile,
    expression: str,
    arg: Any,
    what: str,
    others: tuple[Profile, ...],
    thread_id: str | None = None,
) -> None:
    """Wait in ``profile``'s page until ``expression(arg)`` holds; else say what each has."""
    try:
        profile.page.wait_for_function(expression, arg=arg, timeout=SYNC_MS)
    except PlaywrightTimeoutError:
        seen = "\n".join(_describe(p, thread_id) for p in (profile, *others))
        raise AssertionError(
            f"{profile.name} never showed {what} in {SYNC_S:g} s\n{seen}"
        ) from None


def _wait_for(
    check: Callable[[], Any], what: str, profiles: tuple[Profile, ...], thread_id: str | None
) -> Any:
    """Poll ``check()`` (from Python: it reads IndexedDB) until truthy; its result."""
    deadline = time.monotonic() + SYNC_S
    while not (result := check()):
        if time.monotonic() > deadline:
            seen = "\n".join(_describe(p, thread_id) for p in profiles)
            raise AssertionError(f"never {what} in {SYNC_S:g} s\n{seen}")
        profiles[0].page.wait_for_timeout(100)
    return result


#: The element of node ``id`` in the open conversation, shown from the live snapshot.
_SHOWS_NODE = """(id) => !!document.querySelector(`#messages [data-node-id='${id}']`)
  && (window.panelotApp.chat.snapshot?.nodes ?? []).some((n) => n.id === id)"""
#: Node ``id`` shown with the version position ``pos`` (``n/m``).
_SHOWS_AT = """([id, pos]) => document.querySelector(
  `#messages [data-node-id='${id}'] .branch-pos`)?.textContent === pos"""
#: Node ``id`` shown with a version position ending in ``of`` (``/2``).
_SHOWS_OF = """([id, of]) => document.querySelector(
  `#messages [data-node-id='${id}'] .branch-pos`)?.textContent.endsWith(of) === true"""
#: Node ``id`` shown as the last message, from the live snapshot.
_SHOWS_LAST = """(id) => document.querySelector('#messages .msg:last-child')?.dataset.nodeId === id
  && (window.panelotApp.chat.snapshot?.nodes ?? []).some((n) => n.id === id)"""
_GONE = "(id) => !document.querySelector(`#messages [data-node-id='${id}']`)"
_ROW = "(id) => !!document.querySelector(`#thread-list [data-thread-id='${id}']`)"
_TITLE = """([id, title]) => window.panelotApp.chat.thread?.id === id
  && window.panelotApp.chat.thread.title === title
  && document.getElementById('view-title')?.textContent === title"""
_PINNED = """(id) => window.panelotApp.chat.thread?.id === id
  && window.panelotApp.chat.thread.pinned === true"""
_CLOSED = """(id) => window.panelotApp.view === 'threads' && window.panelotApp.chat.threadId === null
  && !document.querySelector(`#thread-list [data-thread-id='${id}']`)"""


def _node(node_id: str) -> str:
    return f"#messages [data-node-id='{node_id}']"


def _menu(page: Page, action: str) -> None:
    """Choose ``action`` in the open conversation's menu."""
    page.click("#chat-menu summary")
    page.click(f"#chat-menu [data-action={action}]")


def _rename(page: Page, title: str) -> None:
    """Rename the open conversation through its menu's dialog."""
    _menu(page, "rename")
    page.wait_for_selector("#dialog[open]")
    page.fill("#dialog input[name=title]", title)
    page.click("#dialog-ok")
    page.wait_for_selector("#dialog:not([open])", state="attached")


def _user_ids(page: Page) -> list[str]:
    ids = page.eval_on_selector_all(
        "#messages .msg.user", "(els) => els.map((el) => el.dataset.nodeId)"
    )
    return [str(i) for i in ids]


def _configure_in_settings(page: Page, server: str, database: str) -> None:
    """Settings → Sync: type the server and database, Save; wait until this Save landed."""
    to_list(page)
    page.click("#nav-settings")
    page.wait_for_selector("#sync-status .status-part")
    count = int(page.get_attribute("#sync-status", "data-action-count") or "0")
    page.fill("#sync-server", server)
    page.fill("#sync-database", database)
    page.click("#sync-save")
    page.wait_for_selector(f"#sync-status[data-action-count='{count + 1}']")
    assert page.query_selector("#sync-error") is None, page.inner_text("#sync-status")
    to_list(page)


def _wait_status(profile: Profile, check: Callable[[dict[str, Any]], bool], what: str) -> None:
    _wait_for(
        lambda: check(profile.store.query("sync.status")),
        f"{profile.name} {what}",
        (profile,),
        None,
    )


@pytest.fixture(scope="module")
def database(couch_servers: dict[str, str]) -> str:
    """The fresh server database both profiles sync with."""
    return _new_database(couch_servers[OPEN_ENV])


@pytest.fixture(scope="module")
def profiles(
    panelot_launcher: Launcher,
    panelot_stub: StubProvider,
    couch_servers: dict[str, str],
    database: str,
) -> Iterator[tuple[Profile, Profile]]:
    """Profiles A and B, each with a panel open, the stub provider saved, sync running."""
    server = couch_servers[OPEN_ENV]
    with panelot_launcher.launch("panelot-sync-a-") as ext_a:
        with panelot_launcher.launch("panelot-sync-b-") as ext_b:
            a = _open(ext_a, "A", panelot_stub)
            b = _open(ext_b, "B", panelot_stub)
            # A as a user does: Settings → Sync, Save (which starts the loop).
            _configure_in_settings(a.page, server, database)
            # B through its panel's store: configure, then start the loop.
            b.store.send("sync.configure", {"server": server, "database": database})
            b.store.send("sync.start")
            for profile in (a, b):
                _wait_status(profile, _syncing, "syncing")
                assert profile.store.query("sync.status")["database"] == database
            yield a, b
            for profile in (a, b):
                profile.page.close()


def _open(ext: ExtensionContext, name: str, stub: StubProvider) -> Profile:
    page = ext.open_panel()
    configure_provider(page, stub.base_url)
    to_list(page)
    return Profile(name, page, PageStore(page, client_id=f"e2e-{name}"))


def test_each_action_in_one_profile_reaches_the_other(profiles: tuple[Profile, Profile]) -> None:
    a, b = profiles
    pa, pb = a.page, b.page

    # Create: A's + button; the thread appears in B's list.
    tid = new_thread(pa)
    _wait(b, _ROW, tid, f"the thread {tid} in its list", (a,))

    # Append: A sends a message; B, in the conversation, shows the question and reply.
    first_reply = send_message(pa, "Hello from A")
    assert first_reply is not None
    open_thread(pb, tid)
    _wait(b, _SHOWS_NODE, first_reply, "A's first reply", (a,), tid)
    (question,) = _user_ids(pa)
    assert _user_ids(pb) == [question]

    # Edit: a new branch of the question, with its reply; B shows it as version 2/2.
    edited = edit_message(pa, "Hello again from A")
    edited_reply = last_id(pa)
    assert edited != question and edited_reply is not None
    _wait(b, _SHOWS_NODE, edited_reply, "the edited branch's reply", (a,), tid)
    _wait(b, _SHOWS_AT, [edited, "2/2"], "the edit as version 2/2", (a,), tid)

    # Regenerate: another version of the reply.
    pa.locator(_node(edited_reply)).locator("[data-action=regenerate]").click()
    regenerated = wait_reply(pa, edited_reply)
    _wait(b, _SHOWS_AT, [regenerated, "2/2"], "the regenerated reply as 2/2", (a,), tid)

    # Branch switch: A goes back to the first version of the reply.
    pa.locator(f"{_node(regenerated)} [data-action=prev]").click()
    _wait(b, _SHOWS_AT, [edited_reply, "1/2"], "the switched-to reply as 1/2", (a,), tid)
    assert b.store.query("thread.get", {"threadId": tid})["leafId"] == edited_reply

    # Rename and pin, through the conversation's menu.
    _rename(pa, "Synced between two profiles")
    _wait(b, _TITLE, [tid, "Synced between two profiles"], "the new title", (a,), tid)
    _menu(pa, "pin")
    _wait(b, _PINNED, tid, "the pin", (a,), tid)

    # From B to A: an append, a file, a deleted message.
    open_thread(pa, tid)
    b_reply = send_message(pb, "Hello from B")
    assert b_reply is not None
    _wait(a, _SHOWS_NODE, b_reply, "B's reply", (b,), tid)
    b_question = _user_ids(pb)[-1]
    attach(pb, "notes.bin", FILE_BYTES)
    file_reply = send_message(pb, "See the file")
    assert file_reply is not None
    _wait(a, _SHOWS_NODE, file_reply, "the reply to B's file", (b,), tid)
    attachment_id = _attachment_of(b, _user_ids(pb)[-1])
    got = _wait_for(
        lambda: _attachment(a, attachment_id),
        f"A had the bytes of attachment {attachment_id}",
        (a, b),
        tid,
    )
    assert base64.b64decode(got["dataBase64"]) == FILE_BYTES, got

    pb.locator(f"{_node(b_question)} [data-action=delete]").click()
    confirm(pb)
    _wait(a, _GONE, b_question, "B's deleted message gone", (b,), tid)
    tomb = next(n for n in a.store.raw_nodes(tid) if n["id"] == b_question)
    assert tomb["payload"].get("deleted") is True, tomb  # a tombstone, kept

    # Delete the thread in A: B's open conversation closes and its row vanishes.
    _menu(pa, "delete")
    confirm(pa)
    _wait(b, _CLOSED, tid, "the deleted thread closed and gone from its list", (a,), tid)
    # B's cascade removes the thread's nodes and its attachment too.
    _wait_for(
        lambda: (
            not b.store.raw_nodes(tid)
            and attachment_id not in {r["id"] for r in b.store.raw("attachments")}
        ),
        "B deleted the thread's nodes and attachment",
        (b, a),
        tid,
    )


def _attachment_of(profile: Profile, node_id: str) -> str:
    """The id of the attachment the stored node ``node_id`` names."""
    node = next(n for n in profile.store.raw("nodes") if n["id"] == node_id)
    ids = [b["attachmentId"] for b in node["payload"]["content"] if "attachmentId" in b]
    assert len(ids) == 1, node
    return str(ids[0])


def _attachment(profile: Profile, attachment_id: str) -> dict[str, Any] | None:
    """``attachment.get`` once the record and its bytes are stored, else None."""
    rows = [r for r in profile.store.raw("attachments") if r["id"] == attachment_id]
    if not rows or rows[0].get("bytes") is None:
        return None
    return dict(profile.store.query("attachment.get", {"attachmentId": attachment_id}))


def _synced(profile: Profile) -> dict[str, dict[str, Any]]:
    """Every synced table of the profile, record by record, minus the local fields."""
    return {
        table: {row["id"]: local_view(table, row) for row in profile.store.raw(table)}
        for table in SYNCED_TABLES
    }


def _node_ids(profile: Profile) -> set[str]:
    return {str(n["id"]) for n in profile.store.raw("nodes")}


def test_offline_conflicting_edits_converge(profiles: tuple[Profile, Profile]) -> None:
    a, b = profiles
    pa, pb = a.page, b.page
    tid = new_thread(pa)
    reply = send_message(pa, "Before going offline")
    assert reply is not None
    to_list(pb)
    _wait(b, _ROW, tid, f"the thread {tid} in its list", (a,))
    open_thread(pb, tid)
    _wait(b, _SHOWS_NODE, reply, "A's reply", (a,), tid)
    before = _node_ids(a) | _node_ids(b)

    # Offline on both: each loop stopped through the panel's store, and the worker's
    # sync alarm cleared first, so it cannot sync while the loops are stopped (its first
    # firing, 5 minutes after the profile started, could fall in this window).
    for profile in (a, b):
        worker = profile.page.context.service_workers[0]
        assert worker.evaluate("() => chrome.alarms.clear('panelot.sync')") is True
        profile.store.send("sync.stop")
        _wait_status(profile, lambda s: not s["running"], "stopped")

    # Conflicting edits: the same thread renamed differently, appended to on both (A's
    # message with a file); and a memory written in B.
    _rename(pa, "Title from A")
    _rename(pb, "Title from B")
    attach(pa, "offline.bin", FILE_BYTES[::-1])
    send_message(pa, "Offline in A")
    send_message(pb, "Offline in B")
    b.store.send("memory.write", {"key": "written-offline", "value": "in B"})
    written_a, written_b = _node_ids(a) - before, _node_ids(b) - before
    assert len(written_a) == 2 and len(written_b) == 2, (written_a, written_b)
    # Offline indeed: neither side has the other's new nodes.
    assert not written_a & _node_ids(b) and not written_b & _node_ids(a)
    attachment_id = _attachment_of(a, _user_ids(pa)[-1])
    assert _attachment(b, attachment_id) is None

    for profile in (a, b):
        profile.store.send("sync.start")
        _wait_status(profile, _syncing, "syncing again")

    every = before | written_a | written_b

    def converged() -> bool:
        mine, theirs = _synced(a), _synced(b)
        return mine == theirs and every <= set(mine["nodes"])

    try:
        _wait_for(converged, "converged", (a, b), tid)
    except AssertionError as error:
        raise AssertionError(f"{error}\n{_difference(_synced(a), _synced(b))}") from None
    synced = _synced(a)
    assert attachment_id in synced["attachments"], sorted(synced["attachments"])
    assert "written-offline" in repr(synced["memories"]), synced["memories"]
    got = _attachment(b, attachment_id)
    assert got is not None and base64.b64decode(got["dataBase64"]) == FILE_BYTES[::-1]
    title = a.store.query("thread.get", {"threadId": tid})["title"]
    assert title in ("Title from A", "Title from B"), title
    assert b.store.query("thread.get", {"threadId": tid})["title"] == title
    leaf = a.store.query("thread.get", {"threadId": tid})["leafId"]
    assert leaf in written_a | written_b, leaf
    (offline_a,) = (n for n in written_a if _type(a, n) == "user_message")
    (offline_b,) = (n for n in written_b if _type(b, n) == "user_message")
    # Both panels show the merged title and the merged leaf last, the two offline
    # questions as two versions at one place (siblings: "n/2"); every node is in both.
    for profile in (a, b):
        _wait(profile, _TITLE, [tid, title], "the merged title", (), tid)
        _wait(profile, _SHOWS_LAST, leaf, f"the merged leaf {leaf} last", (), tid)
        question = offline_a if offline_a in _user_ids(profile.page) else offline_b
        _wait(profile, _SHOWS_OF, [question, "/2"], "the offline questions as 2 versions", (), tid)
        assert every <= _node_ids(profile), sorted(every - _node_ids(profile))


def _type(profile: Profile, node_id: str) -> str:
    return str(next(n["type"] for n in profile.store.raw("nodes") if n["id"] == node_id))


def _difference(mine: dict[str, Any], theirs: dict[str, Any]) -> str:
    """The records that differ between two profiles' synced tables, table by table."""
    lines = []
    for table in SYNCED_TABLES:
        ids = set(mine[table]) | set(theirs[table])
        for key in sorted(ids):
            left, right = mine[table].get(key), theirs[table].get(key)
            if left != right:
                lines.append(
                    f"{table}:{key}\n  A: {json.dumps(left, default=str)[:400]}"
                    f"\n  B: {json.dumps(right, default=str)[:400]}"
                )
    return "\n".join(lines) or "no difference"
