"""Bad input at every boundary: every bus command, every query, and the parsers.

For each registered command type (``panelot.api.registry.COMMANDS``) hypothesis builds
payloads from the command's own field names plus unknown ones, with hostile values:
missing fields, wrong types, oversized strings, NaN and infinities, integers beyond
2^53, objects with non-string keys, deep nesting, and ids that do exist in the store (so
the handlers get past their first checks). Each is sent through the bus of a fresh
store on the memory core, and:

* ``send`` returns an envelope and never raises; a failure carries one of the project's
  error names (a ``PanelotError`` subclass) and a message; a ``ValidationError`` names
  the field at fault (``field``, also at the start of the message);
* on failure nothing is written: every table of the database, and the settings storage,
  are dumped before and after and compared. A failed command leaves no receipt (the
  receipt is written in the command's own transaction, which is rolled back).

The same for every named query (``panelot.api.registry.QUERIES``), unknown command and query names,
malformed envelopes, the legacy import over hostile ``chrome.storage.local`` layouts,
``providerState`` validation and snapshot recovery. A last test sends a sample through
``panelot.send`` / ``panelot.query`` in Chromium with JS-only values (NaN, undefined,
objects as keys) to prove the boundary maps them to the same errors.
"""

from __future__ import annotations

import copy
import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from playwright.sync_api import Page

from hypothesis_support import examples
from loops import closed_at_end, run_async
from panelot.api.registry import COMMANDS, QUERIES
from panelot.errors import SnapshotError
from panelot.host import memory_host
from panelot.idb import MemoryFactory
from panelot.idb.errors import PanelotError, ValidationError
from panelot.legacy.bounds import MAX_LEGACY_DEPTH, MAX_LEGACY_ENTRIES, MAX_LEGACY_SESSIONS
from panelot.runs.snapshot import make_snapshot, verify_snapshot
from panelot.schema import PANELOT_V1_STORES
from panelot.settings import MemoryStorageBackend
from panelot.settings.credentials import MemoryKeyStore
from panelot.store import PanelotStore
from panelot.tree.records import payload_from_wire


def _subclasses(cls: type) -> set[type]:
    out = {cls}
    for sub in cls.__subclasses__():
        out |= _subclasses(sub)
    return out


PROJECT_ERRORS = {c.name for c in _subclasses(PanelotError)}

#: Field names each command reads (README's command table), so hypothesis hits them.
FIELDS: dict[str, list[str]] = {
    "thread.create": ["title", "folderId", "tags", "preset"],
    "thread.update": ["threadId", "patch"],
    "message.append": ["threadId", "type", "payload", "parentId"],
    "message.send": ["threadId", "thread", "parentId", "content", "uploads", "autoTitle"],
    "message.edit": ["threadId", "nodeId", "payload"],
    "message.regenerate": ["threadId", "userNodeId", "payload"],
    "message.delete": ["threadId", "nodeId"],
    "branch.switch": ["threadId", "nodeId"],
    "thread.import": ["data"],
    "thread.delete": ["threadId"],
    "run.start": ["threadId", "input", "snapshot", "submissionId"],
    "run.transition": ["runId", "to", "error"],
    "approval.request": ["threadId", "runId", "request"],
    "approval.claim": ["approvalId", "decision"],
    "interaction.request": ["threadId", "runId", "request"],
    "interaction.claim": ["interactionId", "response"],
    "skill.put": ["skill"],
    "skill.delete": ["skillId"],
    "memory.write": ["key", "value"],
    "memory.delete": ["key"],
    "plugin.install": ["plugin", "assets"],
    "plugin.uninstall": ["pluginId"],
    "attachment.put": ["threadId", "kind", "mime", "dataBase64", "meta", "nodeId", "trust"],
    "attachment.attach": ["attachmentId", "nodeId", "runId"],
    "attachment.evict": ["budget", "activeThreadId", "storagePercent", "sparedThreadIds"],
    "thread.archive_old": ["days", "activeThreadId", "sparedThreadIds"],
    "thread.count_shown": ["limit"],
    "thread.rescued": ["threadId", "model", "record"],
    "settings.set": ["group", "value"],
    "settings.reset": ["group"],
    "credential.set": ["secret", "ref"],
    "credential.rotate": ["ref", "secret"],
    "credential.delete": ["ref"],
    "legacy.import": ["migrate", "includeHistory"],
    "backup.restore": ["sha256", "size", "settings"],
    "summary.claim": ["attachmentId", "model", "again"],
    "summary.store": ["attachmentId", "model", "text"],
    "summary.fail": ["attachmentId", "model", "error"],
    "search.rebuild": [],
    "sync.configure": ["server", "database", "user", "password"],
    "sync.push": [],
    "sync.pull": [],
    "sync.now": [],
    "sync.start": [],
    "sync.stop": [],
    "sync.forget": [],
    "sync.resume": ["mode"],
    "sync.fetch": ["attachmentId"],
}
QUERY_FIELDS = sorted(
    {"threadId", "leafId", "nodeId", "runId", "submissionId", "format", "limit", "archived"}
    | {"folderId", "tag", "state", "bindings", "skillId", "name", "enabled", "key", "pluginId"}
    | {"path", "attachmentId", "kinds", "group", "ref", "clientId", "threshold"}
    | {"model", "rescue", "status", "message", "code", "type", "contextBudget"}
    | {"text", "filters"}
)
#: Ids that exist in the base store; "{...}" placeholders are filled per example.
EXISTING = ["{thread}", "{node}", "{user}", "{run}", "{approval}", "{skill}", "{attachment}"]


class _Key:
    """A non-string dict key (what a JS object used as a key could not be, in Python)."""

    def __repr__(self) -> str:
        return "<key object>"


#: Words the handlers act on (node types, decisions, groups, states, kinds).
WORDS = ["user_message", "approved", "providers", "running", "image", "L1", "cred:fuzz"]
#: Lone surrogates (U+D800..U+DFFF unpaired): JS strings and IndexedDB hold them.
lone_surrogates = st.characters(categories=["Cs"])
#: Text of any code point, lone surrogates included (hypothesis leaves them out by default).
texts = st.text(st.characters() | lone_surrogates, max_size=12)

hostile_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([math.nan, math.inf, -math.inf, 2**53, -(2**53) - 1, 1e308, -0.0]),
    st.floats(),
    texts,
    st.sampled_from(["", "\ud800", "\udc00x", "a\udbff", "\0", "<script>"]),
    st.sampled_from([100_001, 1_000_000]).map(lambda n: "x" * n),
    st.sampled_from(EXISTING),
    st.sampled_from(WORDS),
    st.tuples(st.sampled_from(WORDS), lone_surrogates).map("".join),
)


def _odd_keys(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.dictionaries(
        st.one_of(st.integers(), st.just(_Key()), st.just(None), st.just((1, 2))),
        inner,
        min_size=1,
        max_size=2,
    )


hostile = st.recursive(
    hostile_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(texts, inner, max_size=3),
        _odd_keys(inner),
    ),
    max_leaves=8,
)


def _deep(n: int) -> Any:
    value: Any = "x"
    for _ in range(n):
        value = {"d": [value]}
    return value


def payloads(kind: str) -> st.SearchStrategy[Any]:
    """Payload dicts for ``kind``: its fields (some missing) plus unknown ones, hostile values."""
    names = FIELDS[kind]
    return st.one_of(
        st.fixed_dictionaries({}, optional={n: hostile for n in [*names, "unknownField"]}),
        st.fixed_dictionaries({}, optional={n: hostile for n in names}).map(
            lambda p: {**p, "deep": _deep(200)}
        ),
        hostile,
    )


async def _base() -> tuple[PanelotStore, dict[str, str], MemoryStorageBackend]:
    backend = MemoryStorageBackend()
    store = closed_at_end(
        await PanelotStore.open(MemoryFactory(), memory_host(backend, MemoryKeyStore()))
    )
    tid = await store.create_thread("fuzz")
    user = await store.append(tid, "user_message", {"content": [{"type": "text", "text": "q"}]})
    node = await store.append(
        tid, "assistant_message", {"content": [], "model": "m", "connectionId": "c"}
    )
    from behavior.runs.cases_runs import snapshot_body

    run = await store.command(
        "run.start", {"threadId": tid, "input": "hi", "snapshot": snapshot_body()}
    )
    await store.command("run.transition", {"runId": run["runId"], "to": "preparing"})
    await store.command("run.transition", {"runId": run["runId"], "to": "running"})
    approval = await store.command(
        "approval.request", {"threadId": tid, "runId": run["runId"], "request": {"tool": "x"}}
    )
    skill = await store.command("skill.put", {"skill": {"name": "s", "body": "b"}})
    att = await store.command(
        "attachment.put",
        {"threadId": tid, "kind": "file", "mime": "text/plain", "dataBase64": "aGk="},
    )
    await store.command("memory.write", {"key": "k", "value": 1})
    await store.command("credential.set", {"secret": "sk-fuzz-secret-0", "ref": "cred:fuzz"})
    ids = {
        "thread": tid,
        "node": node["nodeId"],
        "user": user["nodeId"],
        "run": run["runId"],
        "approval": approval["approvalId"],
        "skill": skill["skillId"],
        "attachment": att["attachmentId"],
    }
    return store, ids, backend


def _fill(value: Any, ids: dict[str, str]) -> Any:
    if isinstance(value, str) and value.startswith("{") and value.endswith("}"):
        return ids.get(value[1:-1], value)
    if isinstance(value, list):
        return [_fill(v, ids) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, ids) for k, v in value.items()}
    return value


async def dump_as_text(store: PanelotStore, backend: MemoryStorageBackend) -> str:
    """Every record of every table, and every settings value, as comparable text."""
    tables = {}
    for name in PANELOT_V1_STORES:
        rows = await store.db.table(name).to_list()
        tables[name] = sorted(repr(r) for r in rows)
    return repr((tables, sorted(backend.dump().items())))


def _assert_project_error(error: dict[str, Any], what: str) -> None:
    assert error["name"] in PROJECT_ERRORS, f"{what}: {error}"
    assert isinstance(error["message"], str) and error["message"], f"{what}: {error}"
    if error["name"] in ("ValidationError", "DataError"):
        field = error.get("field")
        assert isinstance(field, str) and field, f"{what}: no field named in {error}"


STATS: dict[str, dict[str, int]] = {}


async def _send(kind: Any, payload: Any, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    store, ids, backend = await _base()
    before = await dump_as_text(store, backend)
    command = {"type": kind, "clientId": "fuzz", "submissionId": "s-1", "payload": payload}
    command.update(extra or {})
    command = _fill(command, ids)
    out = await store.send(command)
    stats = STATS.setdefault(str(kind), {"completed": 0, "failed": 0})
    stats[out["status"]] += 1
    if out["status"] == "failed":
        _assert_project_error(out["error"], f"{kind}")
        assert await dump_as_text(store, backend) == before, f"{kind} failed but wrote: {out}"
    else:
        assert out["status"] == "completed", out
    return out


FUZZ = settings(
    max_examples=examples(40),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def test_every_registered_command_is_fuzzed() -> None:
    assert set(FIELDS) == set(COMMANDS), set(COMMANDS) ^ set(FIELDS)


@pytest.mark.parametrize("kind", sorted(FIELDS))
def test_command_payloads(kind: str) -> None:
    @FUZZ
    @given(payloads(kind))
    @example({"": None})  # once named no field: "payload." (an empty key)
    def check(payload: Any) -> None:
        run_async(_send(kind, payload))

    check()


@FUZZ
@given(
    st.one_of(st.text(max_size=20), hostile),
    st.fixed_dictionaries(
        {}, optional={"clientId": hostile, "submissionId": hostile, "payload": hostile}
    ),
)
def test_unknown_types_and_malformed_envelopes(kind: Any, extra: dict[str, Any]) -> None:
    async def attempt() -> None:
        out = await _send(kind, {}, extra)
        if not (isinstance(kind, str) and kind in COMMANDS):
            assert out["error"]["name"] == "UnknownCommandError" and out["error"]["field"] == "type"

    run_async(attempt())


def test_envelopes_that_are_not_objects() -> None:
    async def attempt() -> None:
        store, _, _ = await _base()
        for command in (None, [], "thread.create", 7, {"type": None}):
            out = await store.send(command)
            assert out["status"] == "failed"
            _assert_project_error(out["error"], repr(command))

    run_async(attempt())


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_query_args(name: str) -> None:
    @FUZZ
    @given(
        st.one_of(
            st.fixed_dictionaries({}, optional={f: hostile for f in QUERY_FIELDS}),
            hostile,
        )
    )
    @example({"": None})  # found by build.py fuzz: the error named the field ""
    def check(args: Any) -> None:
        async def attempt() -> None:
            store, ids, backend = await _base()
            before = await dump_as_text(store, backend)
            try:
                await store.query(name, _fill(args, ids))
            except PanelotError as exc:
                _assert_project_error(exc.to_json(), name)
            # reads may repair (docs/tree.md, Integrity repair) but the base store is sound:
            # nothing changes
            assert await dump_as_text(store, backend) == before

        run_async(attempt())

    check()


def test_unknown_query_names() -> None:
    async def attempt() -> None:
        store, _, _ = await _base()
        for name in ("nope", "", "thread.list ", "THREAD.LIST"):
            try:
                await store.query(name, {})
            except PanelotError as exc:
                assert exc.name == "UnknownCommandError" and exc.field == "name"
            else:
                raise AssertionError(f"query {name!r} was accepted")

    run_async(attempt())


# ---- the legacy import over a hostile chrome.storage.local layout ---------------------------

legacy_entries = st.one_of(
    hostile,
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "system", 3])},
        optional={
            "content": st.one_of(
                hostile,
                st.lists(
                    st.fixed_dictionaries(
                        {"type": st.sampled_from(["text", "image_url", 5])},
                        optional={
                            "text": hostile,
                            "image_url": st.one_of(
                                hostile,
                                st.sampled_from(
                                    [
                                        {"url": "data:image/png;base64,aGk="},
                                        {"url": "data:image/png;base64,!!"},
                                        "data:,%ZZ",
                                        {"url": "javascript:alert(1)"},
                                    ]
                                ),
                            ),
                            "name": hostile,
                        },
                    ),
                    max_size=3,
                ),
            ),
            "model": hostile,
            "provider": hostile,
            "videoSrc": hostile,
        },
    ),
)
histories = st.one_of(hostile, st.lists(legacy_entries, max_size=5))
layouts = st.fixed_dictionaries(
    {},
    optional={
        "history": histories,
        "savedSessions": st.one_of(
            hostile,
            st.lists(
                st.one_of(
                    hostile,
                    st.fixed_dictionaries(
                        {"id": st.one_of(st.sampled_from(["a", "b"]), hostile)},
                        optional={
                            "name": hostile,
                            "createdAt": hostile,
                            "pinned": hostile,
                            "history": histories,
                        },
                    ),
                ),
                max_size=3,
            ),
        ),
        "session_a": st.one_of(histories, st.fixed_dictionaries({"history": histories})),
        "session_b": histories,
    },
)


def _json_safe(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False, sort_keys=True)
    except (TypeError, ValueError):
        return False
    return True


async def _legacy(layout: dict[str, Any]) -> dict[str, Any]:
    store, _, backend = await _base()
    await backend.set(layout)
    before = await dump_as_text(store, backend)
    out = await store.send(
        {"type": "legacy.import", "clientId": "fuzz", "submissionId": "l-1", "payload": {}}
    )
    if out["status"] == "failed":
        _assert_project_error(out["error"], "legacy.import")
        tables_before = before.split("}, [")[0]
        assert (await dump_as_text(store, backend)).split("}, [")[0] == tables_before
    else:
        response = out["response"]
        for thread_id in [
            response["threadIds"]["history"],
            *response["threadIds"]["sessions"].values(),
        ]:
            if thread_id is not None:
                report = await store.query("thread.check", {"threadId": thread_id})
                assert report["ok"], report
    return out


@settings(
    max_examples=examples(200),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(layouts.filter(_json_safe))
@example({"savedSessions": [{"id": "\ud800"}]})  # once a UnicodeEncodeError in uuid5
@example({"savedSessions": [{"id": "a", "name": "\udc00"}, {"id": "b\udfff", "history": []}]})
def test_legacy_import_of_hostile_layouts(layout: dict[str, Any]) -> None:
    run_async(_legacy(layout))


def test_legacy_import_is_bounded() -> None:
    """Too many sessions, too many entries, too deep, too large: refused, naming the key."""
    entry = {"role": "user", "content": "hi"}
    cases = [
        (
            {"savedSessions": [{"id": f"s{i}"} for i in range(MAX_LEGACY_SESSIONS + 1)]},
            "savedSessions",
        ),
        ({"history": [entry] * (MAX_LEGACY_ENTRIES + 1)}, "history"),
        ({"history": [entry, {"role": "user", "content": _deep(MAX_LEGACY_DEPTH)}]}, "history[1]"),
        ({"history": [{"role": "user", "content": "x" * 16_000_001}]}, "history[0]"),
        (
            {"savedSessions": [{"id": "a", "history": [entry, {"x": _deep(40)}]}]},
            "savedSessions[0].history[1]",
        ),
        (
            {"savedSessions": [{"id": "a"}], "session_a": [entry] * (MAX_LEGACY_ENTRIES + 1)},
            "session_a",
        ),
    ]
    for layout, field in cases:
        out = run_async(_legacy(layout))
        assert out["status"] == "failed", field
        assert out["error"]["name"] == "ValidationError", out
        assert out["error"]["field"] == field and field in out["error"]["message"], out
    # within the bounds it imports
    ok = run_async(_legacy({"history": [entry, {"role": "assistant", "content": _deep(10)}]}))
    assert ok["status"] == "completed", ok


# ---- providerState and snapshot recovery ---------------------------------------------------

thinking_blocks = st.fixed_dictionaries(
    {"type": st.sampled_from(["thinking", "redacted_thinking", "text", 1])},
    optional={"thinking": hostile, "signature": hostile, "data": hostile, "extra": hostile},
)
provider_states = st.one_of(
    hostile,
    st.fixed_dictionaries(
        {"provider": st.sampled_from(["anthropic", "openai", 0])},
        optional={"blocks": st.one_of(hostile, st.lists(thinking_blocks, max_size=70))},
    ),
)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(provider_states)
def test_provider_state_validation(state: Any) -> None:
    payload = {"content": [], "model": "m", "connectionId": "c", "providerState": state}
    try:
        payload_from_wire("assistant_message", payload)
    except ValidationError as exc:
        assert exc.field and exc.field.startswith("payload.providerState"), exc.to_json()
        assert exc.message.startswith(exc.field.split("[")[0].split(".")[0]), exc.to_json()


def _snapshot_paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _snapshot_paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _snapshot_paths(v, (*prefix, i))
    return out


def _valid_snapshot() -> dict[str, Any]:
    from behavior.runs.cases_runs import snapshot_body

    return make_snapshot(snapshot_body())


SNAPSHOT = _valid_snapshot()
SNAPSHOT_PATHS = _snapshot_paths(SNAPSHOT)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(SNAPSHOT_PATHS), hostile), min_size=1, max_size=3))
def test_snapshot_verification_of_mutated_snapshots(mutations: list[tuple[Any, Any]]) -> None:
    wire: Any = copy.deepcopy(SNAPSHOT)
    for path, new in mutations:
        if not path:
            wire = new
            continue
        target = wire
        try:
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = new
        except (KeyError, IndexError, TypeError):
            continue
    try:
        verify_snapshot(wire)
    except (SnapshotError, ValidationError) as exc:
        assert exc.message and exc.field, exc.to_json()


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile, st.one_of(hostile, st.just({"connection": {}, "executionBindings": {}})))
def test_run_recover_with_a_corrupt_stored_snapshot(snapshot: Any, bindings: Any) -> None:
    """A stored snapshot replaced by anything: ``run.recover`` reports a project error."""

    async def attempt() -> None:
        store, ids, _ = await _base()
        runs = store.db.table("runs")
        record = await runs.get(ids["run"])
        try:
            await runs.put({**record, "snapshot": snapshot})
        except PanelotError:
            return  # not storable, so it cannot be found stored
        try:
            await store.query("run.recover", {"runId": ids["run"], "bindings": bindings})
        except PanelotError as exc:
            _assert_project_error(exc.to_json(), "run.recover")

    run_async(attempt())


# ---- through panelot.send / panelot.query in Chromium ------------------------------------------

JS_SAMPLES = """async () => {
  const send = (type, payload, extra = {}) => window.panelot.send(
    { type, clientId: "js-fuzz", submissionId: crypto.randomUUID(), payload, ...extra });
  const key = {};
  const out = [];
  const cases = [
    ["thread.create", { title: NaN }],
    ["thread.create", { title: undefined, tags: [Infinity] }],
    ["thread.create", { title: "x".repeat(2000) }],
    ["message.append", { threadId: { [key]: 1 }, type: "user_message", payload: {} }],
    ["message.append", { threadId: "nope", type: "user_message", payload: { content: [{ type: "text", text: NaN }] } }],
    ["memory.write", { key: NaN, value: 1 }],
    ["memory.write", { key: "k", value: { [key]: -Infinity } }],
    ["attachment.evict", { budget: -1 }],
    ["run.transition", { runId: 12345678901234567890, to: "running" }],
    ["nope.nope", {}],
    [undefined, {}],
  ];
  for (const [type, payload] of cases) out.push(await send(type, payload));
  out.push(await send("thread.create", {}, { clientId: NaN }));
  out.push(await send("thread.create", null));
  let queried;
  try { queried = await window.panelot.query("thread.get", { threadId: NaN }); }
  catch (error) { queried = { rejected: { name: error.name, field: error.field } }; }
  out.push(queried);
  try { queried = await window.panelot.query("no.such.query", {}); }
  catch (error) { queried = { rejected: { name: error.name, field: error.field } }; }
  out.push(queried);
  return out;
}"""


def test_js_values_at_the_boundary(harness_page: Page) -> None:
    """JS values are checked before they cross as JSON, then checked as usual in Python.

    What JSON would silently change (NaN and infinities become null, a function
    disappears) is refused at the boundary with a ValidationError naming its path;
    undefined properties are absent; an object used as a key becomes "[object Object]".
    """
    results = harness_page.evaluate(JS_SAMPLES)
    *sent, get_nan, unknown_query = results
    for i, out in enumerate(sent):
        if out["status"] == "failed":
            _assert_project_error(out["error"], f"JS case {i}")
    assert all(out["status"] == "failed" for out in sent), sent
    fields = [out["error"].get("field") for out in sent]
    assert fields[0] == "payload.title", fields  # NaN: refused, not turned into null
    assert fields[1:4] == ["payload.tags[0]", "payload.title", "payload.threadId"], fields
    assert fields[4] == "payload.payload.content[0].text", fields
    assert fields[5:8] == ["payload.key", "payload.value.[object Object]", "payload.budget"]
    assert fields[8] == "payload.runId", fields  # beyond 2^53, and no id: refused by the decoder
    assert [sent[i]["error"]["name"] for i in (9, 10)] == ["UnknownCommandError"] * 2
    assert fields[9:13] == ["type", "type", "clientId", "payload"], fields
    assert get_nan == {"rejected": {"name": "ValidationError", "field": "threadId"}}
    assert unknown_query == {"rejected": {"name": "UnknownCommandError", "field": "name"}}


def test_non_json_js_values_are_refused_by_path(harness_page: Page) -> None:
    """Functions, Dates, Maps, BigInts and cycles never reach Python half-converted."""
    out = harness_page.evaluate(
        """async () => {
      const send = (payload) => window.panelot.send(
        { type: "thread.create", clientId: "js", submissionId: crypto.randomUUID(), payload });
      const cyclic = { title: "c" }; cyclic.self = cyclic;
      const shared = { a: 1 };
      const results = [];
      for (const payload of [{ title: () => 1 }, { title: new Date(0) }, { tags: new Map() },
                             { title: 10n }, cyclic, { tags: [shared, shared].map(() => "t") }]) {
        results.push(await send(payload));
      }
      let queried;
      try { await window.panelot.query("thread.list", { limit: NaN }); }
      catch (error) { queried = error; }
      results.push(queried);
      return results;
    }"""
    )
    *sent, queried = out
    assert [r["status"] for r in sent] == ["failed"] * 5 + ["completed"]
    assert [r["error"]["field"] for r in sent[:5]] == [
        "payload.title",
        "payload.title",
        "payload.tags",
        "payload.title",
        "payload.self",
    ]
    assert "Date is not JSON data" in sent[1]["error"]["message"]
    assert "cycle" in sent[4]["error"]["message"]
    assert queried == {
        "name": "ValidationError",
        "message": "limit: must be a finite number, got NaN",
        "field": "limit",
    }


# ---- lone surrogates in every string of valid payloads ---------------------------------------

#: A payload each command accepts in the base store (``{name}`` placeholders filled per
#: example), so a lone surrogate put into any of its strings reaches the handler's depths.
VALID: dict[str, dict[str, Any]] = {
    "thread.create": {"title": "t", "folderId": "f", "tags": ["a", "b"], "preset": "p"},
    "thread.update": {
        "threadId": "{thread}",
        "patch": {"title": "t", "tags": ["x"], "folderId": "f", "preset": "p"},
    },
    "message.append": {
        "threadId": "{thread}",
        "type": "tool_result",
        "payload": {
            "itemId": "call-1",
            "ok": True,
            "contentForLlm": [{"type": "text", "text": "done"}],
            "details": {"rows": ["r" * 40_000, {"k": "v"}]},  # offloaded to an attachment
        },
    },
    "message.send": {
        "threadId": "{thread}",
        "parentId": "{user}",
        "content": [{"type": "text", "text": "with a file"}, {"type": "file", "upload": 0}],
        "uploads": [{"mime": "text/plain", "name": "n.txt", "dataBase64": "aGk="}],
        "autoTitle": {"title": "with a file", "when": ["", "New chat"]},
    },
    "message.edit": {
        "threadId": "{thread}",
        "nodeId": "{user}",
        "payload": {
            "content": [{"type": "text", "text": "edited"}],
            "attachedContext": [
                {"type": "page", "text": "p", "url": "https://a.test", "title": "A"}
            ],
        },
    },
    "message.regenerate": {
        "threadId": "{thread}",
        "userNodeId": "{user}",
        "payload": {
            "content": [{"type": "text", "text": "again"}],
            "model": "m",
            "connectionId": "c",
        },
    },
    "summary.claim": {"attachmentId": "{attachment}", "model": "m", "again": True},
    "summary.store": {"attachmentId": "{attachment}", "model": "m", "text": "A summary."},
    "summary.fail": {"attachmentId": "{attachment}", "model": "m", "error": "HTTP 500"},
    "search.rebuild": {},
    "sync.configure": {
        "server": "https://couch.example",
        "database": "panelot",
        "user": "u",
        "password": "p",
    },
    "sync.push": {},
    "sync.pull": {},
    "sync.now": {},
    "sync.start": {},
    "sync.stop": {},
    "sync.forget": {},
    "sync.resume": {"mode": "merge"},
    "sync.fetch": {"attachmentId": "{attachment}"},
    "message.delete": {"threadId": "{thread}", "nodeId": "{node}"},
    "branch.switch": {"threadId": "{thread}", "nodeId": "{user}"},
    "thread.import": {"data": "{export}"},
    "thread.delete": {"threadId": "{thread}"},
    "run.start": {"threadId": "{thread}", "input": "hi", "snapshot": "{snapshot}"},
    "run.transition": {"runId": "{run}", "to": "cancelled"},
    "approval.request": {"threadId": "{thread}", "runId": "{run}", "request": {"tool": "x"}},
    "approval.claim": {"approvalId": "{approval}", "decision": "approved"},
    "interaction.request": {"threadId": "{thread}", "runId": "{run}", "request": {"q": "?"}},
    "interaction.claim": {"interactionId": "none", "response": {"a": "b"}},
    "skill.put": {
        "skill": {"id": "s", "name": "n", "body": "b", "description": "d", "sourceRef": "r"}
    },
    "skill.delete": {"skillId": "{skill}"},
    "memory.write": {"key": "k", "value": {"note": "v", "list": ["a"]}},
    "memory.delete": {"key": "k"},
    "plugin.install": {
        "plugin": {"id": "p", "name": "n", "version": "1", "manifest": {"title": "m"}},
        "assets": [{"path": "a/b.css", "kind": "style", "mime": "text/css", "dataBase64": "aGk="}],
    },
    "plugin.uninstall": {"pluginId": "none"},
    "attachment.put": {
        "threadId": "{thread}",
        "kind": "file",
        "mime": "text/plain",
        "dataBase64": "aGk=",
        "meta": {"title": "notes.txt", "url": "https://a.test/n"},
        "sourceRef": "ref",
    },
    "attachment.attach": {"attachmentId": "{attachment}", "nodeId": "{user}"},
    "attachment.evict": {"budget": 1, "activeThreadId": "{thread}"},
    "thread.archive_old": {"days": 1, "activeThreadId": "{thread}"},
    "thread.count_shown": {"limit": 5},
    "thread.rescued": {
        "threadId": "{thread}",
        "model": "m",
        "record": {"itemKeys": ["{node}#c0", "{attachment}"], "contextBudget": 900},
    },
    "settings.set": {
        "group": "providers",
        "value": {
            "connections": [
                {
                    "id": "c",
                    "kind": "openai",
                    "baseUrl": "https://a.test",
                    "models": ["m"],
                    "label": "L",
                }
            ]
        },
    },
    "settings.reset": {"group": "ui"},
    "credential.set": {"secret": "sk-secret-value", "ref": "cred:new"},
    "credential.rotate": {"ref": "cred:fuzz", "secret": "sk-rotated"},
    "credential.delete": {"ref": "cred:fuzz"},
    "legacy.import": {"migrate": True, "includeHistory": True},
    "backup.restore": {"sha256": "0" * 64, "size": 10, "settings": True},
}
#: Arguments each query accepts in the base store.
VALID_QUERIES: dict[str, dict[str, Any]] = {
    "search.messages": {
        "text": "with a fi",
        "limit": 5,
        "filters": {"folder": "f", "tag": "a", "pinned": False, "from": 0, "to": 2**40},
    },
    "search.status": {},
    "sync.status": {},
    "sync.test": {},
    "sync.attachment": {"attachmentId": "{attachment}"},
    "summary.candidates": {"threadId": "{thread}", "model": "m", "threshold": 1},
    "summary.list": {"threadId": "{thread}"},
    "thread.list": {"folderId": "f", "tag": "a"},
    "backup.export": {"settings": False},
    "thread.get": {"threadId": "{thread}"},
    "thread.context": {"threadId": "{thread}", "leafId": "{node}"},
    "thread.request": {"threadId": "{thread}", "seenImages": ["{attachment}"]},
    "thread.snapshot": {"threadId": "{thread}"},
    "thread.siblings": {"nodeId": "{node}"},
    "thread.export": {"threadId": "{thread}", "format": "markdown"},
    "thread.check": {"threadId": "{thread}"},
    "thread.summary": {"threadId": "{thread}"},
    "retention.preview": {"days": 1, "sparedThreadIds": ["{thread}"]},
    "file.readable": {"name": "notes.txt", "mime": "text/plain"},
    "provider.overflow": {"status": 400, "message": "prompt is too long", "type": "x"},
    "thread.sent": {"threadId": "{thread}", "leafId": "{node}", "model": "m"},
    "run.get": {"runId": "{run}"},
    "run.list": {"threadId": "{thread}", "state": "running"},
    "approvals.pending": {"threadId": "{thread}"},
    "skill.list": {"name": "s"},
    "skill.get": {"skillId": "{skill}"},
    "memory.get": {"key": "k"},
    "plugin.assets": {"pluginId": "p"},
    "plugin.asset": {"pluginId": "p", "path": "a.css"},
    "attachment.list": {"threadId": "{thread}"},
    "attachment.get": {"attachmentId": "{attachment}"},
    "attachment.resolve": {"threadId": "{thread}", "kinds": ["image", "file"]},
    "node.details": {"nodeId": "{node}"},
    "settings.get": {"group": "ui"},
    "credential.status": {"ref": "cred:fuzz"},
    "receipts.list": {"clientId": "fuzz"},
}
#: Reads run after every accepted command: none may raise anything but a project error.
READS = ["thread.list", "thread.get", "thread.context", "thread.snapshot", "thread.check"]
READS += ["thread.export", "thread.request", "settings.all", "memory.list", "skill.list"]
READS += ["plugin.list", "credential.list", "receipts.list", "attachment.list"]


def _strings(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], bool]]:
    """Every string position of ``value``: (path, is_key)."""
    if isinstance(value, str):
        return [(path, False)]
    out: list[tuple[tuple[Any, ...], bool]] = []
    if isinstance(value, dict):
        for k, v in value.items():
            out.append(((*path, k), True))
            out += _strings(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _strings(v, (*path, i))
    return out


def _with_lone(value: Any, path: tuple[Any, ...], is_key: bool, char: str, at: float) -> Any:
    """A copy of ``value`` with ``char`` inserted into the string (or key) at ``path``."""
    if not path:
        return value[: int(at * len(value))] + char + value[int(at * len(value)) :]
    head, rest = path[0], path[1:]
    if isinstance(value, list):
        return [
            _with_lone(v, rest, is_key, char, at) if i == head else v for i, v in enumerate(value)
        ]
    out = {}
    for k, v in value.items():
        if k != head:
            out[k] = v
        elif rest or not is_key:
            out[k] = _with_lone(v, rest, is_key, char, at)
        else:
            out[_with_lone(k, (), False, char, at)] = v
    return out


def _fill_all(value: Any, ids: dict[str, Any]) -> Any:
    if isinstance(value, str) and value.startswith("{") and value.endswith("}"):
        return ids.get(value[1:-1], value)
    if isinstance(value, list):
        return [_fill_all(v, ids) for v in value]
    if isinstance(value, dict):
        return {k: _fill_all(v, ids) for k, v in value.items()}
    return value


async def _valid_base() -> tuple[PanelotStore, dict[str, Any], MemoryStorageBackend]:
    from behavior.runs.cases_runs import snapshot_body

    store, ids, backend = await _base()
    export = await store.query("thread.export", {"threadId": ids["thread"]})
    await backend.set({"history": [{"role": "user", "content": "legacy q"}]})
    return store, {**ids, "export": export["data"], "snapshot": snapshot_body()}, backend


async def _reads_after(store: PanelotStore, ids: dict[str, Any]) -> None:
    for name in READS:
        try:
            await store.query(name, {"threadId": ids["thread"]} if "thread." in name else {})
        except PanelotError as exc:
            _assert_project_error(exc.to_json(), f"{name} after")


lone_edits = st.lists(
    st.tuples(st.integers(0, 10_000), lone_surrogates, st.floats(0, 1)), min_size=1, max_size=3
)


async def _send_with_lone(kind: str, edits: list[tuple[int, str, float]]) -> dict[str, Any]:
    store, ids, backend = await _valid_base()
    payload = _fill_all(VALID[kind], ids)
    places = _strings(payload)
    for pick, char, at in edits:
        path, is_key = places[pick % len(places)]
        payload = _with_lone(payload, path, is_key, char, at)
    before = await dump_as_text(store, backend)
    command = {"type": kind, "clientId": "fuzz", "submissionId": "lone", "payload": payload}
    out = await store.send(command)
    if out["status"] == "failed":
        _assert_project_error(out["error"], kind)
        assert await dump_as_text(store, backend) == before, f"{kind} failed but wrote: {out}"
    else:
        assert out["status"] in ("completed", "acknowledged"), out
        assert await store.send(command) == out  # the replay: the same fingerprint
        await _reads_after(store, ids)
    return out


def test_valid_payloads_are_accepted_before_any_lone_surrogate() -> None:
    """The templates reach the handlers: each is accepted as it is (a few need a state)."""
    needs_other_state = {"interaction.request", "interaction.claim", "plugin.uninstall"}
    needs_other_state.add("backup.restore")  # its file is staged by store.restore_backup
    needs_other_state |= {"summary.store", "summary.fail"}  # after a summary.claim
    needs_other_state.add("sync.push")  # a configured, running server: tests/behavior/sync/
    needs_other_state |= {"sync.pull", "sync.now", "sync.start", "sync.fetch"}  # the same
    assert set(VALID) == set(COMMANDS) and set(VALID_QUERIES) <= set(QUERIES)
    for kind in sorted(set(VALID) - needs_other_state):
        out = run_async(_send_with_lone(kind, []))
        assert out["status"] != "failed", (kind, out)


#: The commands whose valid payload holds a string to put a lone surrogate in.
WITH_STRINGS = sorted(kind for kind in VALID if _strings(VALID[kind]))


@pytest.mark.parametrize("kind", WITH_STRINGS)
def test_lone_surrogates_in_any_string_of_a_valid_payload(kind: str) -> None:
    @FUZZ
    @given(lone_edits)
    def check(edits: list[tuple[int, str, float]]) -> None:
        run_async(_send_with_lone(kind, edits))

    check()


@pytest.mark.parametrize("name", sorted(n for n in VALID_QUERIES if _strings(VALID_QUERIES[n])))
def test_lone_surrogates_in_any_string_of_valid_query_args(name: str) -> None:
    @FUZZ
    @given(lone_edits)
    def check(edits: list[tuple[int, str, float]]) -> None:
        async def attempt() -> None:
            store, ids, backend = await _valid_base()
            args = _fill_all(VALID_QUERIES[name], ids)
            places = _strings(args)
            for pick, char, at in edits:
                path, is_key = places[pick % len(places)]
                args = _with_lone(args, path, is_key, char, at)
            before = await dump_as_text(store, backend)
            try:
                await store.query(name, args)
            except PanelotError as exc:
                _assert_project_error(exc.to_json(), name)
            assert await dump_as_text(store, backend) == before

        run_async(attempt())

    check()
