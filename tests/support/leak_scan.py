"""Looking for a secret in what a browser profile stores.

``DUMP_IDB`` reads every value of every IndexedDB database of the page's origin as text;
:func:`secret_forms` lists the forms a leaked secret could take in it. Shared by
``test_credentials.py`` and ``test_secret_scan.py``.
"""

from __future__ import annotations

import base64
import json

__all__ = ["DUMP_IDB", "secret_forms"]

#: Every value of every object store of every IndexedDB database of the origin, as text.
DUMP_IDB = """async () => {
  const out = {};
  const text = async (v) => {
    if (v instanceof Blob) return "BLOB:" + (await v.text());
    if (v instanceof CryptoKey) return "CRYPTOKEY:" + JSON.stringify({ e: v.extractable, a: v.algorithm, u: v.usages });
    if (v instanceof ArrayBuffer || ArrayBuffer.isView(v)) return "BYTES:" + new TextDecoder().decode(v);
    if (Array.isArray(v)) return "[" + (await Promise.all(v.map(text))).join(",") + "]";
    if (v && typeof v === "object") {
      const parts = [];
      for (const [k, x] of Object.entries(v)) parts.push(k + ":" + (await text(x)));
      return "{" + parts.join(",") + "}";
    }
    return JSON.stringify(v);
  };
  for (const { name } of await indexedDB.databases()) {
    const db = await new Promise((res, rej) => {
      const r = indexedDB.open(name);
      r.onsuccess = () => res(r.result);
      r.onerror = () => rej(r.error);
    });
    for (const store of db.objectStoreNames) {
      const values = await new Promise((res, rej) => {
        const r = db.transaction(store).objectStore(store).getAll();
        r.onsuccess = () => res(r.result);
        r.onerror = () => rej(r.error);
      });
      out[name + "/" + store] = await Promise.all(values.map(text));
    }
    db.close();
  }
  return out;
}"""


def secret_forms(secret: str) -> list[str]:
    """The secret in clear, URL-encoded, hex, and base64/base64url at every alignment."""
    raw = secret.encode()
    out = [secret, secret.lower(), raw.hex(), json.dumps(secret)[1:-1]]
    for shift in range(3):
        for enc in (base64.b64encode, base64.urlsafe_b64encode):
            b64 = enc(b"\0" * shift + raw).decode()
            out.append(b64[(shift * 4 + 2) // 3 + 2 : -4])
    return out
