"""The protocol's calls to the server: one database, through ``Host.http``.

Every call sends and reads JSON. What is not a success raises
:class:`~panelot.errors.NetworkError` naming the call and what the server said: a
401 or 403 says the user or password was refused (never the password, never the
header), a 404 of the database says it does not exist, a body that is no JSON (or is
nested deeper than Python parses) says so. Every answer is at most :data:`MAX_RESPONSE`
bytes and every call gives up after :attr:`Couch.timeout` seconds (the host's
``NetworkError``).
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import re
import urllib.parse
from collections.abc import Callable, Mapping
from typing import Any

from panelot.errors import NetworkError
from panelot.host.http import DEFAULT_TIMEOUT, Http, HttpRequest, HttpResponse
from panelot.idb.blobs import blob_size
from panelot.sync.server import Target

__all__ = ["MAX_ANSWER_DEPTH", "MAX_RESPONSE", "Couch", "nesting"]

MAX_RESPONSE = 16 * 1024 * 1024
"""The size limit of a response (a ``_revs_diff`` of 100 ids is far under it)."""

MAX_ANSWER_DEPTH = 256
"""The deepest nesting of an answer parsed (a ``_bulk_get`` answer wraps each
document in six levels, and a document deeper than
:data:`~panelot.sync.fetch.MAX_DOC_DEPTH` is then refused by id). It is checked on
the bytes before ``json.loads``: Pyodide's parser must never recurse as deep as a
hostile server nests."""

_REASON = 200
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_BRACKETS = bytes(range(256)).translate(None, b"[]{}")
_SIGNS = bytes.maketrans(b"[]{}", b"\x01\xff\x01\xff")


def nesting(body: bytes) -> int:
    """How deep the JSON text ``body`` nests (its brackets outside strings), in C loops."""
    signs = _STRING.sub(b"", body).translate(_SIGNS, _BRACKETS)
    return max(itertools.accumulate(memoryview(signs).cast("b")), default=0)


def _reason(body: bytes) -> str:
    """What a server's error body says (``error: reason``), cut short."""
    try:
        data = json.loads(body)
    except ValueError:
        return ""
    if not isinstance(data, dict):
        return ""
    text = ": ".join(str(data[k]) for k in ("error", "reason") if isinstance(data.get(k), str))
    return text[:_REASON]


class Couch:
    """One database on one server, as the sync section calls it."""

    def __init__(
        self,
        http: Http,
        target: Target,
        authorization: str | None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self._http = http
        self.target = target
        self._authorization = authorization
        self.timeout = timeout
        """Seconds a call may take unless it says otherwise (the long-poll does)."""

    def __repr__(self) -> str:  # the header stays out of every repr
        return f"Couch({self.target.url})"

    async def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        missing_ok: bool = False,
        timeout: float | None = None,
    ) -> Any:
        """``method`` on the database's ``path`` with a JSON ``body``; the JSON answer.

        ``missing_ok``: a 404 answers ``None`` instead of raising. ``timeout``: seconds
        (default: :attr:`timeout`).
        """
        headers = {"Accept": "application/json"}
        if self._authorization is not None:
            headers["Authorization"] = self._authorization
        data = None
        if body is not None:
            headers["Content-Type"] = "application/json"
            data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        url = self.target.url + path
        seconds = self.timeout if timeout is None else timeout
        req = HttpRequest(method, url, headers, data, limit=MAX_RESPONSE, timeout=seconds)
        response = await self._http(req)
        where = f"{method} {url}"
        if response.status in (401, 403):
            raise NetworkError(
                f"{where}: {response.status}: the server refused the user or password "
                "(check them, and that the user may write this database)",
                field="password",
            )
        if response.status == 404 and missing_ok:
            return None
        if response.status == 404 and path == "":
            raise NetworkError(f"{where}: the database does not exist", field="database")
        if not response.ok:
            said = _reason(response.body)
            raise NetworkError(f"{where}: {response.status}{': ' + said if said else ''}")
        if nesting(response.body) > MAX_ANSWER_DEPTH:
            raise NetworkError(f"{where}: the answer is nested deeper than {MAX_ANSWER_DEPTH}")
        try:
            return json.loads(response.body)
        except ValueError:
            raise NetworkError(f"{where}: the answer is not JSON") from None
        except RecursionError:  # nested deeper than Python parses: never a crash
            raise NetworkError(f"{where}: the answer is nested too deep to read") from None

    async def info(self) -> dict[str, Any]:
        """``GET /db``: the database exists and the credentials are accepted."""
        answer = await self.call("GET", "")
        if not isinstance(answer, dict):
            raise NetworkError(f"GET {self.target.url}: not a database's answer")
        return answer

    async def revs_diff(self, revs: Mapping[str, list[str]]) -> dict[str, set[str]]:
        """``POST /db/_revs_diff``: the revisions of ``revs`` the server is missing."""
        answer = await self.call("POST", "/_revs_diff", dict(revs))
        if not isinstance(answer, dict):
            raise NetworkError(f"POST {self.target.url}/_revs_diff: not an object")
        missing: dict[str, set[str]] = {}
        for key, entry in answer.items():
            listed = entry.get("missing") if isinstance(entry, dict) else None
            if key in revs and isinstance(listed, list):
                missing[key] = {r for r in listed if isinstance(r, str)}
        return missing

    async def bulk_docs(self, docs: list[dict[str, Any]]) -> None:
        """``POST /db/_bulk_docs {docs, new_edits: false}``; an error of any doc raises."""
        answer = await self.call("POST", "/_bulk_docs", {"docs": docs, "new_edits": False})
        items = answer if isinstance(answer, list) else []
        failed = [
            f"{item.get('id')}: {item.get('error')}"
            for item in items
            if isinstance(item, dict) and "error" in item
        ]
        if failed:
            shown = "; ".join(str(f)[:_REASON] for f in failed[:5])
            raise NetworkError(f"POST {self.target.url}/_bulk_docs: refused {shown}")

    async def get_local(self, local_id: str) -> dict[str, Any] | None:
        """``GET /db/_local/<id>``, or ``None`` if there is none."""
        answer = await self.call("GET", _local_path(local_id), missing_ok=True)
        return answer if isinstance(answer, dict) else None

    async def put_local(self, local_id: str, doc: dict[str, Any]) -> None:
        """``PUT /db/_local/<id>`` (over the one there, whose ``_rev`` it reads first)."""
        current = await self.get_local(local_id)
        body = dict(doc)
        if current is not None and isinstance(current.get("_rev"), str):
            body["_rev"] = current["_rev"]
        await self.call("PUT", _local_path(local_id), body)

    async def _get_raw(self, path: str, limit: int, blob: str | None) -> HttpResponse | None:
        headers = {"Accept": "*/*"}
        if self._authorization is not None:
            headers["Authorization"] = self._authorization
        url = self.target.url + path
        req = HttpRequest("GET", url, headers, None, limit=limit, timeout=self.timeout, blob=blob)
        response = await self._http(req)
        if response.status in (401, 403):
            raise NetworkError(
                f"GET {url}: {response.status}: the server refused the user or password",
                field="password",
            )
        if response.status == 404:
            return None
        if not response.ok:
            raise NetworkError(f"GET {url}: {response.status}")
        return response

    async def get_bytes(self, path: str, limit: int) -> bytes | None:
        """``GET`` of the database's ``path`` as bytes, at most ``limit``; ``None`` on a 404."""
        response = await self._get_raw(path, limit, None)
        return None if response is None else bytes(response.body)

    async def get_blob(
        self, path: str, limit: int, mime: str, make: Callable[[bytes, str], Any]
    ) -> tuple[Any, int, str] | None:
        """``GET`` of ``path`` streamed into a Blob of ``mime``: ``(blob, size, digest)``.

        At most ``limit`` bytes (refused as soon as passed); ``digest`` is CouchDB's
        ``md5-<base64>`` of the bytes, computed while they came. ``None`` on a 404.
        ``make(bytes, mime)`` makes the Blob when the host answered bytes instead (a
        host that does not stream, such as a test's fake).
        """
        response = await self._get_raw(path, limit, mime)
        if response is None:
            return None
        blob, md5 = response.blob, response.md5
        if blob is None or md5 is None:
            blob, md5 = make(bytes(response.body), mime), _md5(response.body)
        return blob, blob_size(blob), "md5-" + base64.b64encode(md5).decode()


def _md5(data: bytes) -> bytes:
    return hashlib.md5(data, usedforsecurity=False).digest()


def _local_path(local_id: str) -> str:
    return "/_local/" + urllib.parse.quote(local_id, safe="")
