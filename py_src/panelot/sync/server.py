"""The server and database a store syncs with, checked, and the Basic auth header.

The URL must be ``https``, except on loopback (``127.0.0.1``, ``localhost``,
``[::1]``), where ``http`` is allowed; it holds no user, password, query or fragment
(the user and password are given apart). The database name is CouchDB's: a lowercase
letter, then lowercase letters, digits and ``_$()+-/``. A refusal names its field.
"""

from __future__ import annotations

import base64
import re
import urllib.parse
from dataclasses import dataclass

from panelot.idb.errors import ValidationError
from panelot.surrogates import well_formed

__all__ = [
    "LOOPBACK",
    "MAX_USER",
    "Target",
    "basic_auth",
    "check_database",
    "check_password",
    "check_server",
    "check_user",
]

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
"""The hosts where ``http`` is allowed."""

_DATABASE = re.compile(r"^[a-z][a-z0-9_$()+/-]{0,237}$")
_MAX_URL = 2048
MAX_USER = 256
"""The longest user name."""
_MAX_PASSWORD = 4096


def check_server(value: object) -> str:
    """The server URL ``value``, checked, without a trailing ``/``."""
    if not isinstance(value, str) or not value or len(value) > _MAX_URL or not value.isascii():
        raise ValidationError("server: must be a URL (ASCII, punycode hosts)", field="server")
    if any(ord(c) < 0x21 or ord(c) == 0x7F for c in value):
        raise ValidationError("server: no spaces or control characters", field="server")
    try:
        parts = urllib.parse.urlsplit(value)
        port = parts.port
    except ValueError:
        raise ValidationError("server: not a valid URL", field="server") from None
    host = parts.hostname
    if parts.scheme not in ("http", "https") or not host:
        raise ValidationError("server: must be an https:// URL", field="server")
    if parts.scheme == "http" and host not in LOOPBACK:
        raise ValidationError(
            "server: must be https:// (http:// only on 127.0.0.1, localhost or [::1])",
            field="server",
        )
    if parts.username is not None or parts.password is not None:
        raise ValidationError("server: give the user and password apart", field="server")
    if parts.query or parts.fragment or "?" in value or "#" in value:
        raise ValidationError("server: no query or fragment", field="server")
    if port == 0:
        raise ValidationError("server: not a valid port", field="server")
    return value.rstrip("/")


def check_database(value: object) -> str:
    """The database name ``value``, checked (CouchDB's rules)."""
    if not isinstance(value, str) or not _DATABASE.match(value):
        raise ValidationError(
            "database: a lowercase letter, then lowercase letters, digits or _$()+-/",
            field="database",
        )
    return value


def check_user(value: object) -> str:
    """A user name for Basic auth: well-formed text without ``:`` or control characters."""
    if (
        not isinstance(value, str)
        or not 0 < len(value) <= MAX_USER
        or not well_formed(value)
        or ":" in value
        or any(ord(c) < 0x20 or ord(c) == 0x7F for c in value)
    ):
        raise ValidationError(
            f"user: 1 to {MAX_USER} characters, no ':' or control characters", field="user"
        )
    return value


def check_password(value: object) -> str:
    """A password: non-empty well-formed text (the message never holds it)."""
    if not isinstance(value, str) or not 0 < len(value) <= _MAX_PASSWORD:
        raise ValidationError(
            f"password: must be 1 to {_MAX_PASSWORD} characters", field="password"
        )
    if not well_formed(value):
        raise ValidationError("password: must not contain lone surrogates", field="password")
    return value


def basic_auth(user: str, password: str) -> str:
    """The ``Authorization`` header's value for ``user`` and ``password``."""
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return f"Basic {token}"


@dataclass(frozen=True, slots=True)
class Target:
    """A checked server and database."""

    server: str
    database: str

    @property
    def url(self) -> str:
        """The database's URL."""
        return f"{self.server}/{urllib.parse.quote(self.database, safe='')}"

    def __repr__(self) -> str:
        return f"Target({self.url})"
