"""A typed Python handle over a page's ``window.panelot``, for tests.

Every value crosses into the page as a JSON argument of ``page.evaluate`` (never spliced
into code), so a payload with quotes, backticks or ``</script>`` arrives unchanged.
"""

from __future__ import annotations

import base64
import itertools
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from playwright.sync_api import Page

__all__ = [
    "DB_NAME",
    "PageLiveQuery",
    "PageStore",
    "SeededThread",
    "StoreError",
    "error_class",
    "raw_bytes",
]

#: The IndexedDB database the extension opens (panelot.schema.DB_NAME).
DB_NAME = "panelot_v1"

_SEND = """async ([command]) => window.panelot.send(command)"""

#: A domain error is a plain object; a JS Error's name and message are not enumerable.
_PLAIN_ERROR = """const plainError = (error) => (error && typeof error === "object")
  ? { ...error, name: String(error.name ?? "Error"), message: String(error.message ?? error) }
  : { name: "Error", message: String(error) };"""

_QUERY = f"""async ([name, args]) => {{
  {_PLAIN_ERROR}
  try {{
    return {{ ok: true, result: await window.panelot.query(name, args) }};
  }} catch (error) {{
    return {{ ok: false, error: plainError(error) }};
  }}
}}"""

_LIVE_START = f"""([key, name, args]) => {{
  {_PLAIN_ERROR}
  const all = (window.__panelotTestingLive ??= {{}});
  const entry = {{ results: [], errors: [], stop: null }};
  all[key] = entry;
  entry.stop = window.panelot.live(name, args,
    (result) => entry.results.push(result),
    (error) => entry.errors.push(plainError(error)));
}}"""

_LIVE_WAIT = """([key, n]) => {
  const entry = window.__panelotTestingLive[key];
  return entry.results.length > n || entry.errors.length > 0;
}"""

_LIVE_TAKE = """([key, n]) => {
  const entry = window.__panelotTestingLive[key];
  return entry.results.length > n ? { ok: true, result: entry.results[n] }
    : { ok: false, error: entry.errors[0] };
}"""

_LIVE_STOP = """([key]) => {
  const entry = window.__panelotTestingLive?.[key];
  if (entry) { entry.stop(); delete window.__panelotTestingLive[key]; }
}"""

#: Reads a whole object store with IndexedDB itself; binary values become
#: {"$bytes": base64} and Blobs {"$blob": {type, size, base64}}.
_RAW = """async ([dbName, table]) => {
  const db = await new Promise((resolve, reject) => {
    const req = indexedDB.open(dbName);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
  try {
    if (!db.objectStoreNames.contains(table)) {
      return { ok: false, error: `no object store ${table} in ${dbName}:`
        + ` ${Array.from(db.objectStoreNames).join(", ")}` };
    }
    const rows = await new Promise((resolve, reject) => {
      const req = db.transaction(table, "readonly").objectStore(table).getAll();
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
    const b64 = (bytes) => {
      let text = "";
      for (let i = 0; i < bytes.length; i += 0x8000) {
        text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
      }
      return btoa(text);
    };
    const plain = async (value) => {
      if (value instanceof Blob) {
        const bytes = new Uint8Array(await value.arrayBuffer());
        return { $blob: { type: value.type, size: value.size, base64: b64(bytes) } };
      }
      if (value instanceof ArrayBuffer) return { $bytes: b64(new Uint8Array(value)) };
      if (ArrayBuffer.isView(value)) {
        return { $bytes: b64(new Uint8Array(value.buffer, value.byteOffset, value.byteLength)) };
      }
      if (value instanceof Date) return value.toISOString();
      if (Array.isArray(value)) return Promise.all(value.map(plain));
      if (value && typeof value === "object") {
        const out = {};
        for (const [k, v] of Object.entries(value)) out[k] = await plain(v);
        return out;
      }
      return value;
    };
    return { ok: true, rows: await plain(rows) };
  } finally {
    db.close();
  }
}"""


class StoreError(Exception):
    """A domain error the store answered with: its ``name``, ``message`` and ``field``.

    ``send`` and ``query`` raise a subclass named after the error (see :func:`error_class`),
    so ``pytest.raises(error_class("ValidationError"))`` matches that name only;
    ``details`` holds the whole error object (``problems``, ...).
    """

    name: str = "StoreError"

    def __init__(self, message: str, *, field: str | None = None, details: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.details: dict[str, Any] = dict(details or {})

    def __str__(self) -> str:
        where = f" (field {self.field!r})" if self.field else ""
        return f"{self.name}: {self.message}{where}"


_ERROR_CLASSES: dict[str, type[StoreError]] = {}


def error_class(name: str) -> type[StoreError]:
    """The :class:`StoreError` subclass for the domain error ``name`` (one per name)."""
    found = _ERROR_CLASSES.get(name)
    if found is None:
        found = type(name, (StoreError,), {"name": name, "__module__": __name__})
        _ERROR_CLASSES[name] = found
    return found


def _raise(error: Mapping[str, Any], context: str) -> None:
    name = str(error.get("name") or "Error")
    message = str(error.get("message", ""))
    field_ = error.get("field")
    raise error_class(name)(
        f"{context}: {message}",
        field=None if field_ is None else str(field_),
        details=dict(error),
    )


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


def _reply(text: str) -> dict[str, Any]:
    return {**_text(text), "model": "stub-model", "connectionId": "seed"}


@dataclass(frozen=True)
class SeededThread:
    """What :meth:`PageStore.seed_thread` wrote: the thread and its nodes, in order."""

    thread_id: str
    user_ids: list[str] = field(default_factory=list)
    reply_ids: list[str] = field(default_factory=list)

    @property
    def leaf_id(self) -> str | None:
        """The last node written (the thread's leaf), if any."""
        return self.reply_ids[-1] if self.reply_ids else None


class PageLiveQuery(Iterator[Any]):
    """The results of a page's ``panelot.live(name, args)``, in order: ``next()`` waits.

    Host-side, over Playwright: not :class:`panelot.idb.observe.LiveQuery`, the async
    live query it subscribes to in the page.

    The first result is the query's result now; each later one follows a change. A
    failed run raises its :class:`StoreError`. Close it (or use ``with``) to unsubscribe.
    """

    _keys = itertools.count(1)

    def __init__(
        self, page: Page, name: str, args: Mapping[str, Any], timeout_s: float = 10.0
    ) -> None:
        self._page = page
        self.name = name
        self.args = dict(args)
        self.timeout_s = timeout_s
        self._key = f"live-{uuid.uuid4().hex}"
        self._taken = 0
        page.evaluate(_LIVE_START, [self._key, name, self.args])

    def __iter__(self) -> PageLiveQuery:
        return self

    def __next__(self) -> Any:
        return self.next(self.timeout_s)

    def next(self, timeout_s: float | None = None) -> Any:
        """Wait for the next result (at most ``timeout_s``) and return it."""
        limit = self.timeout_s if timeout_s is None else timeout_s
        try:
            self._page.wait_for_function(
                _LIVE_WAIT, arg=[self._key, self._taken], timeout=limit * 1000
            )
        except Exception as exc:
            raise AssertionError(
                f"live {self.name}({self.args}) gave no result #{self._taken + 1} in {limit:g} s"
            ) from exc
        taken = self._page.evaluate(_LIVE_TAKE, [self._key, self._taken])
        if not taken["ok"]:
            _raise(taken["error"], f"live {self.name}")
        self._taken += 1
        return taken["result"]

    def until(self, check: Callable[[Any], bool], timeout_s: float | None = None) -> Any:
        """Take results until one satisfies ``check``; return it."""
        limit = self.timeout_s if timeout_s is None else timeout_s
        deadline = time.monotonic() + limit
        seen: list[Any] = []
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(
                    f"live {self.name}({self.args}): no result satisfied the check in "
                    f"{limit:g} s; the last ones: {seen[-3:]}"
                )
            try:
                result = self.next(left)
            except AssertionError:
                continue
            if check(result):
                return result
            seen.append(result)

    def close(self) -> None:
        """Unsubscribe (the page's unsubscribe function)."""
        if not self._page.is_closed():
            self._page.evaluate(_LIVE_STOP, [self._key])

    def __enter__(self) -> PageLiveQuery:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class PageStore:
    """The store a page sees (``window.panelot``), from Python, through Playwright.

    Synchronous and host-side: not :class:`panelot.PanelotStore`, the async store that
    runs inside the page (or on the memory core).

    ``client_id`` is the ``clientId`` of every command :meth:`send` submits.
    """

    def __init__(self, page: Page, client_id: str = "panelot-testing") -> None:
        self.page = page
        self.client_id = client_id

    # ---- commands and queries ------------------------------------------------------------

    def envelope(
        self, type: str, payload: Mapping[str, Any] | None = None, submission_id: str | None = None
    ) -> dict[str, Any]:
        """``panelot.send`` as is: ``{status: "completed", response}`` or ``status: "failed"``."""
        command = {
            "type": type,
            "clientId": self.client_id,
            "submissionId": submission_id or str(uuid.uuid4()),
            "payload": dict(payload or {}),
        }
        return dict(self.page.evaluate(_SEND, [command]))

    def send(
        self, type: str, payload: Mapping[str, Any] | None = None, submission_id: str | None = None
    ) -> Any:
        """Run a command; return its response, or raise its domain error by name."""
        envelope = self.envelope(type, payload, submission_id)
        if envelope.get("status") != "completed":
            _raise(envelope.get("error") or {"message": str(envelope)}, type)
        return envelope["response"]

    def query(self, name: str, args: Mapping[str, Any] | None = None) -> Any:
        """Run a named query; return its result, or raise its domain error by name."""
        outcome = self.page.evaluate(_QUERY, [name, dict(args or {})])
        if not outcome["ok"]:
            _raise(outcome["error"], name)
        return outcome["result"]

    def live(
        self, name: str, args: Mapping[str, Any] | None = None, timeout_s: float = 10.0
    ) -> PageLiveQuery:
        """``panelot.live(name, args)`` as an iterator of its results (:class:`PageLiveQuery`)."""
        return PageLiveQuery(self.page, name, args or {}, timeout_s)

    # ---- IndexedDB itself ------------------------------------------------------------------

    def raw(self, table: str, db_name: str = DB_NAME) -> list[dict[str, Any]]:
        """Every record of an object store, read with IndexedDB itself (not the store).

        Binary values come back as ``{"$bytes": base64}``, Blobs as
        ``{"$blob": {"type", "size", "base64"}}`` (see :func:`raw_bytes`).
        """
        outcome = self.page.evaluate(_RAW, [db_name, table])
        if not outcome["ok"]:
            raise AssertionError(outcome["error"])
        return list(outcome["rows"])

    def raw_nodes(self, thread_id: str) -> list[dict[str, Any]]:
        """A thread's stored nodes (tombstones included), by ``seq``, from IndexedDB itself."""
        rows = [r for r in self.raw("nodes") if r.get("threadId") == thread_id]
        return sorted(rows, key=lambda r: r["seq"])

    # ---- waiting for proof -----------------------------------------------------------------

    def wait_for_receipt(
        self, submission_id: str, client_id: str | None = None, timeout_s: float = 30.0
    ) -> dict[str, Any]:
        """Wait until the receipt of ``submission_id`` is stored (IndexedDB); return it."""
        deadline = time.monotonic() + timeout_s
        while True:
            receipts = self.raw("commandReceipts")
            for receipt in receipts:
                if receipt.get("submissionId") == submission_id and (
                    client_id is None or receipt.get("clientId") == client_id
                ):
                    return receipt
            if time.monotonic() > deadline:
                recent = sorted(receipts, key=lambda r: r.get("createdAt", 0))[-5:]
                seen = [
                    (r.get("clientId"), r.get("commandType"), r.get("submissionId")) for r in recent
                ]
                raise AssertionError(
                    f"no receipt of submission {submission_id!r}"
                    + (f" of client {client_id!r}" if client_id else "")
                    + f" after {timeout_s:g} s; {len(receipts)} stored, the latest: {seen}"
                )
            self.page.wait_for_timeout(50)

    def wait_for_node(
        self,
        predicate: Callable[[dict[str, Any]], bool],
        thread_id: str | None = None,
        timeout_s: float = 30.0,
        description: str = "the predicate",
    ) -> dict[str, Any]:
        """Wait until a stored node (IndexedDB) satisfies ``predicate``; return the first.

        ``thread_id`` limits the search to one thread's nodes, in ``seq`` order.
        """
        deadline = time.monotonic() + timeout_s
        while True:
            rows = self.raw("nodes")
            if thread_id is not None:
                rows = [r for r in rows if r.get("threadId") == thread_id]
            rows.sort(key=lambda r: (r.get("threadId", ""), r.get("seq", 0)))
            for row in rows:
                if predicate(row):
                    return row
            if time.monotonic() > deadline:
                seen = [(r.get("type"), _summary(r)) for r in rows[-5:]]
                where = f" of thread {thread_id!r}" if thread_id else ""
                raise AssertionError(
                    f"no stored node{where} satisfied {description} after {timeout_s:g} s; "
                    f"{len(rows)} nodes, the last: {seen}"
                )
            self.page.wait_for_timeout(50)

    # ---- seeding ---------------------------------------------------------------------------

    def seed_thread(self, *turns: str, title: str | None = None, **options: Any) -> SeededThread:
        """A new thread with one user message and one assistant reply per turn.

        The reply to ``text`` is ``"About <text>"``. ``options`` go to ``thread.create``
        (``folderId``, ``tags``...).
        """
        created = self.send("thread.create", {**({"title": title} if title else {}), **options})
        seeded = SeededThread(created["threadId"])
        for text in turns:
            self.seed_turn(seeded, text)
        return seeded

    def seed_turn(self, thread: SeededThread | str, text: str, reply: str | None = None) -> str:
        """Append a user message and its reply to a thread's leaf; return the reply id.

        ``thread`` is a :class:`SeededThread` (whose id lists grow) or a thread id.
        """
        thread_id = thread if isinstance(thread, str) else thread.thread_id
        user = self.send(
            "message.append",
            {"threadId": thread_id, "type": "user_message", "payload": _text(text)},
        )
        answer = self.send(
            "message.append",
            {
                "threadId": thread_id,
                "type": "assistant_message",
                "payload": _reply(reply if reply is not None else f"About {text}"),
            },
        )
        if isinstance(thread, SeededThread):
            thread.user_ids.append(user["nodeId"])
            thread.reply_ids.append(answer["nodeId"])
        return str(answer["nodeId"])

    def seed_edit(self, thread_id: str, user_node_id: str, text: str) -> str:
        """A sibling version of a user message (``message.edit``); return its node id."""
        edited = self.send(
            "message.edit", {"threadId": thread_id, "nodeId": user_node_id, "payload": _text(text)}
        )
        return str(edited["nodeId"])

    def seed_regenerate(self, thread_id: str, user_node_id: str, text: str) -> str:
        """Another reply to a user message (``message.regenerate``); return its node id."""
        regenerated = self.send(
            "message.regenerate",
            {"threadId": thread_id, "userNodeId": user_node_id, "payload": _reply(text)},
        )
        return str(regenerated["nodeId"])

    def seed_branches(self, thread_id: str, user_node_id: str, *texts: str) -> list[str]:
        """One more reply per text to a user message (the ``n/m`` versions); their ids."""
        return [self.seed_regenerate(thread_id, user_node_id, text) for text in texts]

    def seed_attachment(
        self,
        thread_id: str,
        data: bytes,
        name: str = "image.png",
        mime: str = "image/png",
        kind: str = "image",
        with_message: bool = True,
        text: str | None = None,
    ) -> str:
        """Store an attachment; with ``with_message``, in a new user message. Its id.

        The message says ``text`` (default ``"see <name>"``) before the attachment's block.
        """
        attachment_id = str(
            self.send(
                "attachment.put",
                {
                    "threadId": thread_id,
                    "kind": kind,
                    "mime": mime,
                    "dataBase64": base64.b64encode(data).decode(),
                    "meta": {"title": name},
                },
            )["attachmentId"]
        )
        if with_message:
            block = {"type": kind, "attachmentId": attachment_id, "name": name}
            node = self.send(
                "message.append",
                {
                    "threadId": thread_id,
                    "type": "user_message",
                    "payload": {"content": [_text(text or f"see {name}")["content"][0], block]},
                },
            )
            self.send(
                "attachment.attach", {"attachmentId": attachment_id, "nodeId": node["nodeId"]}
            )
        return attachment_id

    def reset(self) -> None:
        """Delete every thread, reset every settings group, delete every credential.

        Then check that it is so (deleting a thread deletes its attachments).
        """
        for thread in self.query("thread.list", {"archived": None}):
            self.send("thread.delete", {"threadId": thread["id"]})
        for group in self.query("settings.all")["groups"]:
            self.send("settings.reset", {"group": group})
        for credential in self.query("credential.list"):
            self.send("credential.delete", {"ref": credential["ref"]})
        assert self.query("thread.list", {"archived": None}) == []
        assert self.query("credential.list") == []


def raw_bytes(value: Mapping[str, Any]) -> bytes:
    """The bytes of a ``$bytes`` or ``$blob`` value that :meth:`PageStore.raw` returned."""
    if "$bytes" in value:
        return base64.b64decode(value["$bytes"])
    return base64.b64decode(value["$blob"]["base64"])


def _summary(row: Mapping[str, Any]) -> str:
    payload = row.get("payload")
    content: Sequence[Any] = payload.get("content", []) if isinstance(payload, dict) else []
    texts = [b.get("text", "") for b in content if isinstance(b, dict) and "text" in b]
    return (" ".join(texts) or str(row.get("id")))[:60]
