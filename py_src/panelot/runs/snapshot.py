"""RunEnvironmentSnapshot: the frozen environment of one run.

Before a run enters ``preparing`` its normalized input and this snapshot are stored
in one transaction. The snapshot pins the actual connection, model, parameters and
full system prompt, the skills (catalogue and bodies), the provider-facing tool
schemas and execution bindings, the permission policy, the browser submission
context and the capability/pricing metadata. Recovery uses the snapshot and never
re-resolves mutable settings.

Wire form (camelCase)::

    {"version": 1,
     "connection": {"id", "providerKind", "baseUrl", "credentialRef"},
     "model": str, "parameters": {...}, "systemPrompt": str,
     "skills": [{"id", "name", "body"}], "toolSchemas": [{...}],
     "executionBindings": {...}, "permissionPolicy": <any JSON>,
     "submissionContext": {...}, "capabilities": {...},
     "digest": "<sha-256 hex>"}

``digest`` is the SHA-256 (hex) of the RFC 8785 canonical JSON of every other field,
``version`` included. Secrets never enter a snapshot: ``credentialRef`` is a
reference (``cred:<id>``, id of 1-64 ``[A-Za-z0-9._-]``, refused if it looks like a key:
``sk-``/``sk-ant-``/``Bearer``... prefixes or a run of more than 32 base64/hex
characters). Anywhere in ``connection``, ``parameters`` and ``executionBindings``,
keys named like a secret (ending in ``apiKey``, ``secret``, ``password``,
``authorization``, ``privateKey``, ``cookie``, or ``token``/``accessToken``/
``authToken``... but not ``maxTokens``/``stopToken``) and values that look like one
(``Bearer …``, ``Basic …``, ``sk-…``) are refused, and ``baseUrl`` may carry neither
user credentials nor a secret-named query parameter. Rotating the secret behind the
same reference therefore changes nothing here.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from panelot.canonical import canonical_json as canonical_bytes
from panelot.codec import decode, encode
from panelot.errors import SnapshotIntegrityError, SnapshotTooLargeError, SnapshotVersionError
from panelot.idb.errors import ValidationError

__all__ = [
    "MAX_SNAPSHOT_BYTES",
    "MAX_SNAPSHOT_DEPTH",
    "SNAPSHOT_VERSION",
    "ConnectionBinding",
    "RunEnvironmentSnapshot",
    "SnapshotSkill",
    "canonical_json",
    "make_snapshot",
    "snapshot_digest",
    "verify_snapshot",
]

SNAPSHOT_VERSION = 1
"""The snapshot format version this store writes and reads."""

MAX_SNAPSHOT_BYTES = 2 * 1024 * 1024
"""Largest accepted snapshot: 2 MiB of canonical JSON (UTF-8), digest included."""

MAX_SNAPSHOT_DEPTH = 32
"""Deepest accepted nesting of objects and arrays, the snapshot object itself being 1."""

_CRED_REF = re.compile(r"cred:[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_KEY_PREFIX = re.compile(r"(?i)^(sk[-_]|sk-ant-|pk[-_]|rk[-_]|ghp_|gho_|xox[abprs]-|aiza|bearer\b)")
_SECRET_VALUE = re.compile(r"(?i)^\s*(bearer\s+\S|basic\s+\S|sk-ant-|sk-[A-Za-z0-9]{8})")
_LONG_RUN = re.compile(r"[A-Za-z0-9+/=]{33,}")
_SECRET_KEY_ENDINGS = (
    "apikey",
    "secret",
    "password",
    "passwd",
    "authorization",
    "privatekey",
    "cookie",
)
_TOKEN_KEYS = frozenset(
    f"{p}token"
    for p in ("", "access", "refresh", "auth", "bearer", "id", "session", "api", "security")
)
_SCANNED = ("connection", "parameters", "executionBindings")


@dataclass(slots=True)
class ConnectionBinding:
    """The connection a run uses: non-secret transport fields and a credential reference."""

    id: str
    provider_kind: str
    base_url: str
    credential_ref: str


@dataclass(slots=True)
class SnapshotSkill:
    """One active skill, with its full body as the run saw it."""

    id: str
    name: str
    body: str


@dataclass(slots=True)
class RunEnvironmentSnapshot:
    """The decoded snapshot; :func:`make_snapshot` and :func:`verify_snapshot` make one."""

    version: int
    connection: ConnectionBinding
    model: str
    parameters: dict[str, Any]
    system_prompt: str
    skills: list[SnapshotSkill]
    tool_schemas: list[dict[str, Any]]
    execution_bindings: dict[str, Any]
    permission_policy: Any
    submission_context: dict[str, Any]
    capabilities: dict[str, Any]
    digest: str = ""


def canonical_json(value: Any, path: str = "snapshot") -> bytes:
    """RFC 8785 canonical JSON of ``value``; ValidationError if it has no canonical form.

    Lone surrogates (a system prompt or skill body may hold them) are escaped as
    ``JSON.stringify`` escapes them (:func:`panelot.canonical.canonical_json`).
    """
    try:
        return canonical_bytes(value)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"{path}: cannot be canonicalized ({exc})", field=path) from None
    except RecursionError:
        message = f"{path}: nested too deeply to be canonicalized"
        raise ValidationError(message, field=path) from None


def snapshot_digest(wire: dict[str, Any]) -> str:
    """SHA-256 hex of the canonical JSON of the snapshot without its ``digest`` field."""
    body = {k: v for k, v in wire.items() if k != "digest"}
    return hashlib.sha256(canonical_json(body)).hexdigest()


def _depth_exceeds(value: Any, limit: int) -> bool:
    """True if ``value`` nests containers deeper than ``limit`` (iterative, stops early)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return False


def _check_limits(wire: Any, path: str) -> bytes:
    if _depth_exceeds(wire, MAX_SNAPSHOT_DEPTH):
        raise SnapshotTooLargeError(
            f"{path}: nested deeper than MAX_SNAPSHOT_DEPTH ({MAX_SNAPSHOT_DEPTH})", field=path
        )
    canonical = canonical_json(wire, path)
    if len(canonical) > MAX_SNAPSHOT_BYTES:
        raise SnapshotTooLargeError(
            f"{path}: {len(canonical)} bytes of canonical JSON exceed "
            f"MAX_SNAPSHOT_BYTES ({MAX_SNAPSHOT_BYTES})",
            field=path,
        )
    return canonical


def _secret_key(name: str) -> bool:
    norm = re.sub(r"[^a-z0-9]", "", name.lower())
    return norm.endswith(_SECRET_KEY_ENDINGS) or norm in _TOKEN_KEYS


def _looks_like_key(text: str) -> bool:
    return bool(_KEY_PREFIX.search(text) or _LONG_RUN.search(text))


def _check_credential_ref(ref: str, path: str) -> None:
    if not _CRED_REF.fullmatch(ref):
        raise ValidationError(
            f"{path}: must be a credential reference 'cred:<id>' (id: 1-64 of A-Z a-z 0-9 . _ -),"
            " never the secret itself",
            field=path,
        )
    ident = ref[len("cred:") :]
    if _looks_like_key(ident):
        raise ValidationError(
            f"{path}: looks like a secret key, not a reference; store the secret in the "
            "credential store and reference it as 'cred:<id>'",
            field=path,
        )


def _check_base_url(url: str, path: str) -> None:
    try:
        parts = urlsplit(url)
        userinfo = parts.username is not None or parts.password is not None
    except ValueError:
        raise ValidationError(f"{path}: is not a valid URL", field=path) from None
    if userinfo:
        raise ValidationError(f"{path}: must not carry user credentials", field=path)
    for key, _ in parse_qsl(parts.query, keep_blank_values=True):
        if _secret_key(key) or key.lower() == "key":
            raise ValidationError(
                f"{path}: query parameter {key!r} would hold a secret", field=path
            )


def _scan_secrets(value: Any, path: str) -> None:
    """Refuse secret-named keys and secret-looking strings (iterative walk)."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        item, here = stack.pop()
        if isinstance(item, dict):
            for key, child in item.items():
                child_path = f"{here}.{key}"
                if _secret_key(str(key)):
                    raise ValidationError(
                        f"{child_path}: secrets are never copied into a snapshot; "
                        "use connection.credentialRef",
                        field=child_path,
                    )
                stack.append((child, child_path))
        elif isinstance(item, list):
            stack.extend((child, f"{here}[{i}]") for i, child in enumerate(item))
        elif isinstance(item, str) and _SECRET_VALUE.search(item):
            raise ValidationError(
                f"{here}: looks like a secret credential; secrets are never copied into a snapshot",
                field=here,
            )


def make_snapshot(data: Any, path: str = "snapshot") -> dict[str, Any]:
    """Validate a snapshot body and return its stored wire form, with version and digest.

    ``data`` holds the fields of the module docstring; ``version`` may be given (it must
    be SNAPSHOT_VERSION) and so may ``digest`` (it must then match). Raises
    ValidationError naming the field for a bad shape or a secret,
    SnapshotVersionError, SnapshotIntegrityError or SnapshotTooLargeError.
    """
    if not isinstance(data, dict):
        raise ValidationError(f"{path}: must be an object", field=path)
    body = {k: v for k, v in data.items() if k != "digest"}
    body.setdefault("version", SNAPSHOT_VERSION)
    if body["version"] != SNAPSHOT_VERSION or isinstance(body["version"], bool):
        raise SnapshotVersionError(
            f"{path}.version: unknown snapshot version {body['version']!r}; "
            f"this store writes version {SNAPSHOT_VERSION}",
            field=f"{path}.version",
        )
    _check_limits(body, path)
    typed = decode(RunEnvironmentSnapshot, {**body, "digest": ""}, path)
    conn_path = f"{path}.connection"
    _check_credential_ref(typed.connection.credential_ref, f"{conn_path}.credentialRef")
    _check_base_url(typed.connection.base_url, f"{conn_path}.baseUrl")
    for name in _SCANNED:
        _scan_secrets(body[name], f"{path}.{name}")
    typed.digest = ""
    wire: dict[str, Any] = encode(typed)
    del wire["digest"]
    wire["digest"] = snapshot_digest(wire)
    if "digest" in data and data["digest"] != wire["digest"]:
        raise SnapshotIntegrityError(
            f"{path}.digest: does not match the snapshot's content", field=f"{path}.digest"
        )
    _check_limits(wire, path)
    return wire


def verify_snapshot(wire: Any, path: str = "snapshot") -> RunEnvironmentSnapshot:
    """Check a stored snapshot and return it decoded.

    The checks run cheapest and safest first: structure and size limits
    (SnapshotTooLargeError), then the format version (SnapshotVersionError), then the
    digest and the shape (SnapshotIntegrityError).
    """
    if not isinstance(wire, dict):
        raise SnapshotIntegrityError(f"{path}: must be an object", field=path)
    _check_limits(wire, path)
    version = wire.get("version")
    if version != SNAPSHOT_VERSION or isinstance(version, bool):
        raise SnapshotVersionError(
            f"{path}.version: unknown snapshot version {version!r}; "
            f"this store reads version {SNAPSHOT_VERSION}",
            field=f"{path}.version",
        )
    digest = wire.get("digest")
    if not isinstance(digest, str) or digest != snapshot_digest(wire):
        raise SnapshotIntegrityError(
            f"{path}.digest: the SHA-256 digest does not match the snapshot's content",
            field=f"{path}.digest",
        )
    try:
        return decode(RunEnvironmentSnapshot, wire, path)
    except ValidationError as exc:
        raise SnapshotIntegrityError(
            f"{path}: does not have the snapshot format ({exc.message})", field=exc.field
        ) from None
