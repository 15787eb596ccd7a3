"""Units of panelot.sync (ids, revisions, the mapping, the clock, the server's checks).

And of ``Host.http``'s CPython implementation, against a local server.
"""

from __future__ import annotations

import base64
import hashlib
import http.server
import json
import threading
from collections.abc import Iterator

import pytest
import rfc8785

from loops import run_async
from panelot.errors import NetworkError
from panelot.host.http import HttpRequest, urllib_http
from panelot.idb.blobs import MemoryBlob
from panelot.idb.errors import ValidationError
from panelot.sync.clock import Hlc, parse_hlc
from panelot.sync.docid import SYNCED_TABLES, doc_id, split_doc_id
from panelot.sync.mapping import (
    attachment_digest,
    binary_of,
    body_of,
    content_digest,
    local_view,
    thread_clocks,
)
from panelot.sync.push import Outgoing, _batches, replication_id
from panelot.sync.revs import next_rev, rev_number, revisions
from panelot.sync.server import basic_auth, check_database, check_server, check_user

# ---- document ids -----------------------------------------------------------------------


def test_doc_ids_name_the_table_and_the_key() -> None:
    assert doc_id("nodes", "n_1:2") == "nodes:n_1:2"
    assert split_doc_id("nodes:n_1:2") == ("nodes", "n_1:2")  # the key may hold ':'
    assert set(SYNCED_TABLES) == {
        "threads",
        "nodes",
        "attachments",
        "skills",
        "memories",
        "plugins",
        "pluginAssets",
    }
    for table in ("runs", "commandReceipts", "approvals", "interactions", "_design"):
        with pytest.raises(ValueError):
            doc_id(table, "x")
        with pytest.raises(ValueError):
            split_doc_id(f"{table}:x")
    with pytest.raises(ValueError):
        split_doc_id("nodes:")


# ---- revisions --------------------------------------------------------------------------


def test_revisions_are_md5_of_canonical_json_of_parent_deleted_and_body() -> None:
    body = {"table": "nodes", "v": 1, "record": {"id": "n", "b": [1, 2.5, "é"], "a": None}}
    rev = next_rev(None, False, body)
    text = rfc8785.dumps({"parent": None, "deleted": False, "body": body})
    assert rev == "1-" + hashlib.md5(text).hexdigest()
    reordered = {"v": 1, "record": {"a": None, "b": [1, 2.5, "é"], "id": "n"}, "table": "nodes"}
    assert next_rev(None, False, reordered) == rev  # key order does not matter
    child = next_rev(rev, False, body)
    assert child.startswith("2-") and child != rev
    assert next_rev(rev, True, {}) != next_rev(rev, False, {})
    assert next_rev(rev, False, body) == child  # the same on every device
    assert revisions(child, rev) == {
        "start": 2,
        "ids": [child.partition("-")[2], rev.partition("-")[2]],
    }
    assert revisions(rev, None) == {"start": 1, "ids": [rev.partition("-")[2]]}
    assert rev_number(None) == 0 and rev_number("12-ab") == 12
    for bad in ("x-1", "3", "3-", "-ab"):
        with pytest.raises(ValueError):
            rev_number(bad)


def test_a_lone_surrogate_makes_a_revision_too() -> None:
    rev = next_rev(None, False, {"record": {"title": "a\ud800b"}})
    assert rev.startswith("1-") and len(rev) == 34


# ---- the mapping ------------------------------------------------------------------------


def test_a_threads_local_fields_stay_on_the_device() -> None:
    thread = {
        "id": "t",
        "title": "T",
        "leafId": "n",
        "deleting": True,
        "deletingSince": 5,
        "shown": {"leafId": "n", "turns": 1, "messages": 2},
        "stats": {"nodes": 2},
        "requestCut": {"model": "m"},
    }
    assert local_view("threads", thread) == {"id": "t", "title": "T", "leafId": "n"}
    assert "deleting" in thread  # the record itself is left alone


def test_evicted_flags_are_local_and_bytes_never_in_the_record() -> None:
    block = {"type": "image", "attachmentId": "a", "evicted": True}
    node = {
        "id": "n",
        "payload": {
            "content": [block, {"type": "text", "text": "evicted: true stays text"}],
            "details": {"files": [{"attachmentId": "a", "evicted": True}]},
        },
    }
    view = local_view("nodes", node)
    assert view["payload"]["content"][0] == {"type": "image", "attachmentId": "a"}
    assert view["payload"]["details"] == {"files": [{"attachmentId": "a"}]}
    assert block["evicted"] is True  # a copy was changed, not the record
    att = {"id": "a", "mime": "image/png", "bytes": MemoryBlob(b"\x89PNG", "image/png")}
    assert local_view("attachments", att) == {"id": "a", "mime": "image/png"}
    value, mime = binary_of(att) or (None, "")
    assert isinstance(value, MemoryBlob) and mime == "image/png"
    asset = {"id": "p", "bytes": b"css"}
    assert binary_of(asset) == (b"css", "application/octet-stream")
    assert binary_of({"id": "a", "bytes": None}) is None


def test_attachment_digests_are_couchdbs() -> None:
    data = b"hello"
    md5 = base64.b64encode(hashlib.md5(data).digest()).decode()
    assert attachment_digest(data) == f"md5-{md5}" == "md5-XUFAKrxLKna5cZ2REBfFkg=="


def test_content_digests_see_the_record_and_the_bytes() -> None:
    view = {"id": "a", "x": 1}
    assert content_digest(view, "md5-1") == content_digest({"x": 1, "id": "a"}, "md5-1")
    assert content_digest(view, "md5-1") != content_digest(view, "md5-2")
    assert content_digest(view, None) != content_digest({"id": "a", "x": 2}, None)


def test_thread_clocks_change_only_for_changed_fields() -> None:
    hlc = Hlc("dev1")
    now = iter(range(1000, 2000))

    def tick() -> str:
        return hlc.tick(next(now))

    first = thread_clocks({"title": "a", "pinned": False}, None, None, tick)
    assert set(first) >= {"title", "pinned", "leafId", "tags"}
    assert len(set(first.values())) == len(first)
    fields = {"title": "a", "pinned": False}
    second = thread_clocks({"title": "b", "pinned": False}, fields, first, tick)
    assert second["title"] > first["title"]
    assert {k: v for k, v in second.items() if k != "title"} == {
        k: v for k, v in first.items() if k != "title"
    }  # absent fields that stayed absent keep their clocks too
    assert body_of("threads", {"id": "t"}, second)["clocks"] == second
    assert "clocks" not in body_of("nodes", {"id": "n"}, None)


# ---- the clock --------------------------------------------------------------------------


def test_the_hlc_orders_as_strings_and_never_ties() -> None:
    hlc = Hlc("devA")
    a = hlc.tick(1_700_000_000_000)
    b = hlc.tick(1_700_000_000_000)  # same millisecond: the counter
    c = hlc.tick(1_699_000_000_000)  # the wall clock went back: still later
    assert a < b < c
    assert a == "1700000000000-0000-devA" and b == "1700000000000-0001-devA"
    assert parse_hlc(c) == (1_700_000_000_000, 2, "devA")
    other = Hlc("devB")
    other.see(c)
    d = other.tick(1)
    assert d > c and d.endswith("-devB")
    full = Hlc("devC", 5, 9999)
    assert full.tick(0) == "0000000000006-0000-devC"  # the counter carries into ms
    assert Hlc.parse(d).tick(0) > d
    for bad in ("1-0-x", "1700000000000-0000-", "1700000000000-00000-x"):
        with pytest.raises(ValueError):
            parse_hlc(bad)
    with pytest.raises(ValueError):
        Hlc("bad id")


# ---- the server's checks ----------------------------------------------------------------


def test_the_server_url_is_https_except_on_loopback() -> None:
    assert check_server("https://couch.example/") == "https://couch.example"
    assert check_server("https://couch.example:6984/base") == "https://couch.example:6984/base"
    for url in ("http://127.0.0.1:5984", "http://localhost:5984", "http://[::1]:5984"):
        assert check_server(url) == url
    for url in (
        "http://couch.example",
        "http://127.0.0.2",
        "http://localhost.example",
        "ftp://127.0.0.1",
        "https://user:pw@couch.example",
        "https://couch.example/?a=1",
        "https://couch.example/#x",
        "https://couch.exämple",
        "https://couch.example/ x",
        "https://",
        "",
        None,
        5,
    ):
        with pytest.raises(ValidationError) as error:
            check_server(url)
        assert error.value.field == "server", url


def test_database_names_and_users_follow_couchdbs_rules() -> None:
    assert check_database("panelot") == "panelot"
    assert check_database("a_b$c(d)e+f-g/h1") == "a_b$c(d)e+f-g/h1"
    for name in ("Panelot", "_users", "1db", "", "a b", "a" * 239, None):
        with pytest.raises(ValidationError) as error:
            check_database(name)
        assert error.value.field == "database"
    assert check_user("ana") == "ana"
    for user in ("a:b", "", "a\ud800", "a\nb", None):
        with pytest.raises(ValidationError) as error:
            check_user(user)
        assert error.value.field == "user"
    assert basic_auth("ana", "pä") == "Basic " + base64.b64encode("ana:pä".encode()).decode()


def test_the_replication_id_is_per_device_server_database_and_direction() -> None:
    one = replication_id("d1", "https://c.example", "db", "push")
    assert one == hashlib.md5(b"d1\nhttps://c.example\ndb\npush").hexdigest()
    assert one != replication_id("d2", "https://c.example", "db", "push")
    assert one != replication_id("d1", "https://c.example", "db", "pull")


def test_batches_hold_at_most_100_documents_or_8_mib() -> None:
    small = [Outgoing({"_id": f"nodes:{i}"}, {}) for i in range(250)]
    assert [len(b) for b in _batches(small)] == [100, 100, 50]
    assert [len(b) for b in _batches(small[:5], 2)] == [2, 2, 1]  # Syncer.batch_docs
    big = [Outgoing({"_id": f"a:{i}", "data": "x" * (3 * 1024 * 1024)}, {}) for i in range(5)]
    assert [len(b) for b in _batches(big)] == [2, 2, 1]
    huge = [Outgoing({"_id": "a", "data": "x" * (9 * 1024 * 1024)}, {})]
    assert [len(b) for b in _batches(huge)] == [1]  # one document over the size goes alone


# ---- Host.http in CPython ---------------------------------------------------------------


class _Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        if self.path == "/big":
            body = b"x" * 5000
        elif self.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "http://127.0.0.1:9/elsewhere")
            self.end_headers()
            return
        elif self.path == "/slow":
            self.server.release.wait(10)  # type: ignore[attr-defined]
            body = b"late"
        elif self.path in ("/cut", "/cut-chunked"):
            self.send_response(200)
            if self.path == "/cut":
                self.send_header("Content-Length", "100")
                self.end_headers()
                self.wfile.write(b'{"results": [')  # then the connection closes
            else:
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                self.wfile.write(b'd\r\n{"results": [\r\n')  # no last chunk
            self.close_connection = True
            return
        else:
            body = json.dumps({"auth": self.headers.get("Authorization")}).encode()
        self.send_response(404 if self.path == "/missing" else 200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture()
def local_server() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.release = threading.Event()  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.release.set()  # type: ignore[attr-defined]
    server.shutdown()
    server.server_close()


def test_urllib_http_answers_any_status_and_bounds_the_rest(local_server: str) -> None:
    secret = "Basic c2VjcmV0LXBhc3N3b3Jk"
    ok = run_async(urllib_http(HttpRequest("GET", local_server, {"Authorization": secret})))
    assert ok.status == 200 and json.loads(ok.body) == {"auth": secret}
    assert ok.headers["content-type"] == "application/json"
    missing = run_async(urllib_http(HttpRequest("GET", local_server + "/missing")))
    assert missing.status == 404 and not missing.ok
    moved = run_async(urllib_http(HttpRequest("GET", local_server + "/redirect")))
    assert moved.status == 302  # not followed: headers never go elsewhere
    with pytest.raises(NetworkError, match="over its limit"):
        run_async(urllib_http(HttpRequest("GET", local_server + "/big", limit=4096)))
    for cut in ("/cut", "/cut-chunked"):  # a body cut short is no answer
        with pytest.raises(NetworkError, match="cut short|reading the response"):
            run_async(urllib_http(HttpRequest("GET", local_server + cut)))
    with pytest.raises(NetworkError) as slow:
        req = HttpRequest("GET", local_server + "/slow", {"Authorization": secret}, timeout=0.3)
        run_async(urllib_http(req))
    assert secret not in str(slow.value) and "/slow" in str(slow.value)
    assert secret not in repr(req)
    with pytest.raises(NetworkError) as refused:
        run_async(urllib_http(HttpRequest("GET", "http://127.0.0.1:9/", {"X": secret})))
    assert secret not in str(refused.value)
    for url in ("https://u:p@a.example/", "file:///etc/passwd"):
        with pytest.raises(NetworkError) as bad:
            run_async(urllib_http(HttpRequest("GET", url)))
        assert bad.value.field == "url" and "u:p" not in str(bad.value)
