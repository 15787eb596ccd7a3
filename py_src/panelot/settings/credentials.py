"""Credentials: secrets (API keys) encrypted at rest, decrypted on demand.

A secret is stored in ``chrome.storage.local`` under its reference ``cred:<id>`` as
``{"v": 1, "alg": "AES-GCM", "keyId", "iv", "data", "createdAt", "updatedAt"}``
(base64 IV and ciphertext; the reference is bound as additional data). The key is a
non-extractable WebCrypto ``CryptoKey`` in the IndexedDB database ``panelot_keys``
(see ``web/crypto.mjs``). The light list of references lives under
``credentials.index`` as ``[{ref, createdAt, updatedAt}]``; as in the browsa layout's session
layout, the body is written before the index, so a crash leaves at worst a body the
index does not list yet. Rotating writes a new ciphertext under the same reference.

Nothing here logs, returns or echoes a secret, except :meth:`Credentials.reveal`,
which is Python-only (no query exposes it).

:class:`MemoryKeyStore` is a **test-only stand-in** for CPython, where WebCrypto does
not exist: an HMAC-SHA256 keystream with an HMAC tag (encrypt-then-MAC), under a key
that lives only in the process. Production pages use :class:`WebCryptoKeyStore`.
"""

from __future__ import annotations

import base64
import hmac
import importlib
import json
import re
import secrets
import uuid
from typing import Any, Protocol

from panelot.clock import Clock, now_ms
from panelot.idb.errors import NotFoundError, PanelotError, ValidationError
from panelot.settings.backend import StorageBackend
from panelot.surrogates import well_formed

__all__ = [
    "INDEX_KEY",
    "CredentialError",
    "Credentials",
    "KeyStore",
    "MemoryKeyStore",
    "WebCryptoKeyStore",
    "check_ref",
    "webcrypto_available",
]

INDEX_KEY = "credentials.index"
"""Storage key of the light reference list."""
_REF = re.compile(r"^cred:[A-Za-z0-9._\-]{1,100}$")
MAX_SECRET = 16_384


class CredentialError(PanelotError):
    """A credential could not be decrypted (wrong key, tampered or foreign ciphertext)."""

    name = "CredentialError"


def check_ref(ref: Any, field: str = "ref") -> str:
    """Return ``ref`` if it looks like ``cred:<id>``; ValidationError otherwise."""
    if not isinstance(ref, str) or not _REF.match(ref):
        raise ValidationError(f"{field}: must look like cred:<id>", field=field)
    return ref


def _check_secret(secret: Any, field: str = "secret") -> str:
    """A secret: a non-empty string of at most MAX_SECRET characters, without lone surrogates.

    The key store encrypts its UTF-8 bytes (``TextEncoder`` in the browser would write
    U+FFFD for a lone surrogate), so such a secret could not be revealed as it was given.
    """
    if not isinstance(secret, str) or not 0 < len(secret) <= MAX_SECRET:
        # never include the value in the message
        raise ValidationError(f"{field}: must be a non-empty string", field=field)
    if not well_formed(secret):
        raise ValidationError(f"{field}: must not contain lone surrogates", field=field)
    return secret


class KeyStore(Protocol):
    """Encrypts and decrypts under a key the caller never sees."""

    async def encrypt(self, plaintext: str, ref: str) -> dict[str, str]:
        """Return ``{keyId, iv, data}`` (base64)."""
        ...

    async def decrypt(self, iv: str, data: str, ref: str) -> str:
        """Return the plaintext; raise on any mismatch."""
        ...


def webcrypto_available() -> bool:
    """Whether the ``panelot_crypto`` JS module and ``crypto.subtle`` are present."""
    try:
        import js

        _crypto_module()
    except ImportError:
        return False
    crypto = getattr(js, "crypto", None)
    return crypto is not None and getattr(crypto, "subtle", None) is not None


def _crypto_module() -> Any:
    """The ``panelot_crypto`` JS module registered by ``web/runtime.mjs``."""
    return importlib.import_module("panelot_crypto")


class WebCryptoKeyStore:
    """AES-GCM under the non-extractable key of ``web/crypto.mjs``."""

    async def encrypt(self, plaintext: str, ref: str) -> dict[str, str]:
        """Encrypt with a fresh 96-bit IV."""
        panelot_crypto = _crypto_module()
        out: dict[str, str] = json.loads(await panelot_crypto.encrypt(plaintext, ref))
        return out

    async def decrypt(self, iv: str, data: str, ref: str) -> str:
        """Decrypt and authenticate."""
        panelot_crypto = _crypto_module()
        try:
            return str(await panelot_crypto.decrypt(iv, data, ref))
        except Exception as exc:  # JsException: OperationError and friends
            raise CredentialError(f"{ref}: cannot decrypt ({type(exc).__name__})") from None

    async def key_info(self) -> dict[str, Any]:
        """``{keyId, extractable, algorithm, usages}`` of the key."""
        panelot_crypto = _crypto_module()
        out: dict[str, Any] = json.loads(await panelot_crypto.keyInfo())
        return out


class MemoryKeyStore:
    """Test-only stand-in (see the module docstring); the key never leaves the process."""

    key_id = "memory-hmac-sha256-v1"

    def __init__(self) -> None:
        self._key = secrets.token_bytes(32)

    def _stream(self, iv: bytes, n: int) -> bytes:
        blocks = (
            hmac.digest(self._key, b"enc" + iv + i.to_bytes(4, "big"), "sha256")
            for i in range((n + 31) // 32)
        )
        return b"".join(blocks)[:n]

    def _tag(self, iv: bytes, body: bytes, ref: str) -> bytes:
        return hmac.digest(self._key, b"mac" + ref.encode() + b"\0" + iv + body, "sha256")[:16]

    async def encrypt(self, plaintext: str, ref: str) -> dict[str, str]:
        """Encrypt-then-MAC with a fresh 96-bit IV."""
        iv = secrets.token_bytes(12)
        raw = plaintext.encode()
        body = bytes(a ^ b for a, b in zip(raw, self._stream(iv, len(raw)), strict=True))
        data = body + self._tag(iv, body, ref)
        b64 = base64.b64encode
        return {"keyId": self.key_id, "iv": b64(iv).decode(), "data": b64(data).decode()}

    async def decrypt(self, iv: str, data: str, ref: str) -> str:
        """Verify the tag, then decrypt."""
        raw_iv, raw = base64.b64decode(iv), base64.b64decode(data)
        body, tag = raw[:-16], raw[-16:]
        if not hmac.compare_digest(tag, self._tag(raw_iv, body, ref)):
            raise CredentialError(f"{ref}: cannot decrypt (authentication failed)")
        plain = bytes(a ^ b for a, b in zip(body, self._stream(raw_iv, len(body)), strict=True))
        return plain.decode()


class Credentials:
    """Encrypted secrets under ``cred:<id>`` references in a storage backend."""

    def __init__(self, backend: StorageBackend, keystore: KeyStore, clock: Clock = now_ms):
        self.backend = backend
        self.keystore = keystore
        self.clock = clock

    async def _index(self) -> list[dict[str, Any]]:
        raw = (await self.backend.get([INDEX_KEY])).get(INDEX_KEY)
        if not isinstance(raw, list):
            return []
        return [e for e in raw if isinstance(e, dict) and isinstance(e.get("ref"), str)]

    async def _record(self, ref: str) -> dict[str, Any] | None:
        raw = (await self.backend.get([ref])).get(ref)
        return raw if isinstance(raw, dict) else None

    async def _write(self, ref: str, secret: str, created_at: int | None) -> dict[str, Any]:
        now = self.clock()
        sealed = await self.keystore.encrypt(secret, ref)
        record = {
            "v": 1,
            "alg": "AES-GCM",
            "keyId": sealed["keyId"],
            "iv": sealed["iv"],
            "data": sealed["data"],
            "createdAt": created_at if created_at is not None else now,
            "updatedAt": now,
        }
        await self.backend.set({ref: record})  # the body first ...
        index = [e for e in await self._index() if e["ref"] != ref]
        index.append({"ref": ref, "createdAt": record["createdAt"], "updatedAt": now})
        await self.backend.set({INDEX_KEY: index})  # ... then the index
        return {"ref": ref, "createdAt": record["createdAt"], "updatedAt": now}

    async def set(self, secret: str, ref: str | None = None) -> str:
        """Store ``secret`` (under ``ref``, or a new reference); return the reference."""
        secret = _check_secret(secret)
        ref = check_ref(ref) if ref is not None else f"cred:{uuid.uuid4().hex}"
        existing = await self._record(ref)
        await self._write(ref, secret, existing.get("createdAt") if existing else None)
        return ref

    async def rotate(self, ref: str, secret: str) -> str:
        """Replace the secret of an existing reference; the reference stays the same."""
        secret = _check_secret(secret)
        existing = await self._record(check_ref(ref))
        if existing is None:
            raise NotFoundError(f"{ref}: no such credential", field="ref")
        await self._write(ref, secret, existing.get("createdAt"))
        return ref

    async def reveal(self, ref: str) -> str:
        """Decrypt a secret on demand (Python only; never exposed as a query)."""
        record = await self._record(check_ref(ref))
        if record is None:
            raise NotFoundError(f"{ref}: no such credential", field="ref")
        return await self.keystore.decrypt(str(record["iv"]), str(record["data"]), ref)

    async def delete(self, ref: str) -> None:
        """Remove a credential: the index entry first, then the body."""
        check_ref(ref)
        index = await self._index()
        if not any(e["ref"] == ref for e in index) and await self._record(ref) is None:
            raise NotFoundError(f"{ref}: no such credential", field="ref")
        await self.backend.set({INDEX_KEY: [e for e in index if e["ref"] != ref]})
        await self.backend.remove([ref])

    async def list(self) -> list[dict[str, Any]]:
        """``[{ref, createdAt, updatedAt}]``: references and times, never secrets."""
        return [
            {"ref": e["ref"], "createdAt": e.get("createdAt"), "updatedAt": e.get("updatedAt")}
            for e in await self._index()
        ]

    async def status(self, ref: str) -> dict[str, Any]:
        """``{ref, exists, keyId?, updatedAt?}`` of one reference."""
        record = await self._record(check_ref(ref))
        if record is None:
            return {"ref": ref, "exists": False}
        return {
            "ref": ref,
            "exists": True,
            "keyId": record.get("keyId"),
            "updatedAt": record.get("updatedAt"),
        }
