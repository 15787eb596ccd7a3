"""A restore's SHA-256 in the browser: WebCrypto's up to the limit, Python's past it.

A JS Blob is hashed by the browser (``crypto.subtle.digest``) while Python parses it;
a Blob over :data:`~panelot.idb.browser.files.NATIVE_DIGEST_MAX` is hashed by Python
chunk by chunk instead, so it is never held whole. Both must give hashlib's digest of
the same bytes. The behaviour cases check a whole restore's digest on both cores.
"""

from __future__ import annotations

import hashlib

from playwright.sync_api import Page

from browser_harness import run_py

DATA = ("text é ✓ 🙂 " * 70_001).encode()  # ~1.2 MB of UTF-8: the reader decodes it

CODE = """
import json
from panelot.idb.browser import files
from panelot.idb.browser.convert import wiring_helper
from panelot.idb.transfer.reader import TextStream

data = ("text é ✓ 🙂 " * 70_001).encode()
blob = wiring_helper().blobFromBytes(data, "")

async def digest(limit):
    saved, files.NATIVE_DIGEST_MAX = files.NATIVE_DIGEST_MAX, limit
    try:
        source = files.JsBlobSource(blob)
        by_host = source.sha256() is not None
        stream = TextStream(source, 64 * 1024)
        try:
            while await stream.more():
                stream.drop_consumed()
            return [by_host, await stream.sha256()]
        finally:
            stream.close()
    finally:
        files.NATIVE_DIGEST_MAX = saved

json.dumps({"default": await digest(files.NATIVE_DIGEST_MAX), "over": await digest(1024)})
"""


def test_webcrypto_and_python_give_the_same_sha256(harness_page: Page) -> None:
    out = run_py(harness_page, CODE)
    want = hashlib.sha256(DATA).hexdigest()
    assert out["default"] == [True, want], out  # the browser hashed it
    assert out["over"] == [False, want], out  # past the limit, Python did
