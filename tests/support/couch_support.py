"""The CouchDB-compatible test server (tests/support/couch_server.cjs) from Python.

:func:`couch_server` starts it with ``node`` (express-pouchdb over PouchDB's memory
adapter, npm dev dependencies), waits for the line that names its port, yields its
base URL and kills it at the end. With a user and password it answers 401 to any
request without them. :func:`couch_env` is what the sync behaviour cases read the
servers from (``PANELOT_TEST_COUCH``, ``PANELOT_TEST_COUCH_AUTH``).
"""

from __future__ import annotations

import json
import select
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("couch_server.cjs")
START_TIMEOUT = 60.0
"""Seconds to wait for the server's port line (it takes well under one here)."""


@contextmanager
def couch_server(user: str | None = None, password: str | None = None) -> Iterator[str]:
    """A fresh server on 127.0.0.1; yields ``http://127.0.0.1:<port>``."""
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node is not on PATH (the sync tests' server runs on Node.js)")
    if not (ROOT / "node_modules" / "express-pouchdb").is_dir():
        raise RuntimeError("node_modules lacks express-pouchdb: run `npm ci`")
    args = [node, str(SCRIPT)] + ([user, password or ""] if user else [])
    proc = subprocess.Popen(
        args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], START_TIMEOUT)
        line = proc.stdout.readline() if ready else ""  # the port line, or EOF if it died
        if not line:
            raise RuntimeError(f"the couch server did not start (exit {proc.poll()})")
        port = int(json.loads(line)["port"])
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.kill()
        proc.wait(timeout=10)
