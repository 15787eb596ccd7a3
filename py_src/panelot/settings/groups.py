"""Typed, versioned setting groups and how a stored value is read back.

Each group lives under one ``chrome.storage.local`` key as ``{"version": N, "value": {...}}``
(camelCase wire form of its dataclass). Reading (:func:`read_group`):

1. a missing key gives the defaults;
2. an older ``version`` runs the group's migrations, one version at a time;
3. the stored fields are merged over the defaults (missing fields take their default);
4. an invalid field is dropped (an invalid list item is dropped from its list) and
   reported as a :class:`Problem`, then decoding is retried; anything unusable as a
   whole (not an object, a newer version, a failing migration) gives the defaults.

Reading never raises and never writes: a migrated or repaired value is persisted by
the next :meth:`~panelot.settings.Settings.set`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from panelot.codec import decode, encode
from panelot.idb.errors import ValidationError
from panelot.surrogates import check_well_formed_data

__all__ = [
    "DEFAULT_CONTEXT_BUDGET",
    "DEFAULT_SUMMARY_THRESHOLD",
    "GROUPS",
    "MIN_SUMMARY_THRESHOLD",
    "SETTINGS_KEYS",
    "Connection",
    "Decision",
    "Group",
    "PermissionRule",
    "PermissionSettings",
    "Problem",
    "ProviderSettings",
    "RetentionSettings",
    "UiPreferences",
    "read_group",
    "validate_group",
]

DEFAULT_CONTEXT_BUDGET = 128_000
"""Characters of history a model request carries by default: ~32k tokens at ~4
characters a token (:mod:`panelot.request.history`)."""

DEFAULT_SUMMARY_THRESHOLD = 8_000
"""Bytes from which an attachment gets a summary by default (the stale rule's size)."""

MIN_SUMMARY_THRESHOLD = 1_000
"""The smallest ``summaryThreshold`` a connection takes."""

Decision: TypeAlias = Literal["allow", "ask", "deny"]
Migration = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass(slots=True)
class Connection:
    """A provider connection; its secret lives in credentials under ``credential_ref``.

    ``context_budget``: the characters of history a request to it carries
    (:mod:`panelot.request.history`; ``None``: the whole thread). ``summaries``: whether
    the panel asks its model for a summary of each attachment of at least
    ``summary_threshold`` bytes (:mod:`panelot.request.summaries`).
    """

    id: str
    kind: Literal["openai", "anthropic", "gemini", "ollama", "openai_compatible"]
    base_url: str
    models: list[str] = field(default_factory=list)
    credential_ref: str | None = None
    label: str | None = None
    enabled: bool = True
    context_budget: int | None = DEFAULT_CONTEXT_BUDGET
    summaries: bool = True
    summary_threshold: int = DEFAULT_SUMMARY_THRESHOLD


@dataclass(slots=True)
class ProviderSettings:
    """The ``providers`` group: connections and the default one."""

    connections: list[Connection] = field(default_factory=list)
    default_connection_id: str | None = None


@dataclass(slots=True)
class PermissionRule:
    """An origin pattern (``https://*.example.com``, ``*``) and a decision per capability."""

    origin: str
    capabilities: dict[str, Decision] = field(default_factory=dict)


@dataclass(slots=True)
class PermissionSettings:
    """The ``permissions`` group: rules in order, first match wins, then ``default``."""

    rules: list[PermissionRule] = field(default_factory=list)
    default: Decision = "ask"


@dataclass(slots=True)
class UiPreferences:
    """The ``ui`` group."""

    theme: Literal["system", "light", "dark"] = "system"
    font_size: int = 14
    send_on_enter: bool = True
    show_reasoning: bool = False
    language: str | None = None


@dataclass(slots=True)
class RetentionSettings:
    """The ``retention`` group: archive threads untouched for ``days`` (``None``: off)."""

    days: int | None = None


@dataclass(frozen=True, slots=True)
class Problem:
    """A stored value that could not be used as it was; reported, never raised."""

    group: str
    field: str
    message: str

    def to_json(self) -> dict[str, str]:
        """Wire form."""
        return {"group": self.group, "field": self.field, "message": self.message}


_ORIGIN = re.compile(r"^(\*|(https?|\*)://(\*\.)?[a-z0-9.\-]+(:\d+)?|https?://\*)$", re.I)
_CRED = re.compile(r"^cred:[A-Za-z0-9._\-]{1,100}$")


def _check_providers(value: ProviderSettings) -> None:
    seen: set[str] = set()
    for i, c in enumerate(value.connections):
        path = f"providers.connections[{i}]"
        if c.id in seen or not c.id:
            raise ValidationError(f"{path}.id: must be unique and non-empty", field=f"{path}.id")
        seen.add(c.id)
        if not re.match(r"^https?://", c.base_url):
            raise ValidationError(
                f"{path}.baseUrl: must be an http(s) URL", field=f"{path}.baseUrl"
            )
        if c.context_budget is not None and c.context_budget < 0:
            raise ValidationError(
                f"{path}.contextBudget: must be an integer >= 0 (characters) or null",
                field=f"{path}.contextBudget",
            )
        if c.summary_threshold < MIN_SUMMARY_THRESHOLD:
            raise ValidationError(
                f"{path}.summaryThreshold: must be an integer >= {MIN_SUMMARY_THRESHOLD} (bytes)",
                field=f"{path}.summaryThreshold",
            )
        if c.credential_ref is not None and not _CRED.match(c.credential_ref):
            raise ValidationError(
                f"{path}.credentialRef: must look like cred:<id>", field=f"{path}.credentialRef"
            )
    if value.default_connection_id is not None and value.default_connection_id not in seen:
        raise ValidationError(
            "providers.defaultConnectionId: names no connection",
            field="providers.defaultConnectionId",
        )


def _check_permissions(value: PermissionSettings) -> None:
    for i, rule in enumerate(value.rules):
        if not _ORIGIN.match(rule.origin):
            path = f"permissions.rules[{i}].origin"
            raise ValidationError(f"{path}: not an origin pattern", field=path)


def _check_ui(value: UiPreferences) -> None:
    if not 8 <= value.font_size <= 40:
        raise ValidationError("ui.fontSize: must be 8 to 40", field="ui.fontSize")


def _check_retention(value: RetentionSettings) -> None:
    if value.days is not None and not 1 <= value.days <= 36_500:
        raise ValidationError("retention.days: must be 1 to 36500, or null", field="retention.days")


def _providers_v1_to_v2(v: dict[str, Any]) -> dict[str, Any]:
    """v1 connections had ``url`` and a single ``model``; v2 has ``baseUrl`` and ``models``."""
    out = dict(v)
    conns = []
    for c in v.get("connections", []):
        if isinstance(c, dict):
            c = dict(c)
            if "url" in c:
                c["baseUrl"] = c.pop("url")
            if "model" in c:
                model = c.pop("model")
                c["models"] = [model] if isinstance(model, str) and model else []
        conns.append(c)
    out["connections"] = conns
    return out


@dataclass(frozen=True, slots=True)
class Group:
    """A setting group: its storage key, current version, type, checks and migrations."""

    name: str
    key: str
    version: int
    cls: type[Any]
    check: Callable[[Any], None]
    migrations: dict[int, Migration] = field(default_factory=dict)
    """``{from_version: fn}``: turns a value of ``from_version`` into ``from_version + 1``."""

    def defaults(self) -> Any:
        """A fresh default value."""
        return self.cls()


GROUPS: dict[str, Group] = {
    "providers": Group(
        "providers",
        "settings.providers",
        2,
        ProviderSettings,
        _check_providers,
        {1: _providers_v1_to_v2},
    ),
    "permissions": Group(
        "permissions", "settings.permissions", 1, PermissionSettings, _check_permissions
    ),
    "ui": Group("ui", "settings.ui", 1, UiPreferences, _check_ui),
    "retention": Group("retention", "settings.retention", 1, RetentionSettings, _check_retention),
}
"""Every setting group by name."""

SETTINGS_KEYS: tuple[str, ...] = tuple(g.key for g in GROUPS.values())
"""The fixed, declared key list of a "get all settings" read (never ``get(null)``)."""


def validate_group(group: Group, value: Any) -> Any:
    """Decode and check a new value strictly; ValidationError names the wire field.

    No string may hold a lone surrogate: ``chrome.storage.local`` would store U+FFFD in
    its place, so the value read back would differ from the value written.
    """
    typed = decode(group.cls, value, group.name)
    group.check(typed)
    check_well_formed_data(encode(typed), group.name)
    return typed


_STEP = re.compile(r"^\.?([A-Za-z0-9_]+)(?:\[(\d+)\])?")


def _drop(value: dict[str, Any], group: str, path: str) -> bool:
    """Drop the top-level field (or list item) that ``path`` names; False if impossible."""
    match = _STEP.match(path[len(group) :]) if path.startswith(group) else None
    if match is None or match.group(1) not in value:
        return False
    name, index = match.group(1), match.group(2)
    current = value[name]
    if index is not None and isinstance(current, list) and int(index) < len(current):
        value[name] = current[: int(index)] + current[int(index) + 1 :]
    else:
        del value[name]
    return True


def read_group(group: Group, stored: Any) -> tuple[Any, list[Problem]]:
    """Return the typed value of a stored group record, and what was wrong with it."""
    if stored is None:
        return group.defaults(), []
    problems: list[Problem] = []

    def whole(message: str) -> tuple[Any, list[Problem]]:
        problems.append(Problem(group.name, group.name, message))
        return group.defaults(), problems

    if not isinstance(stored, dict) or not isinstance(stored.get("value"), dict):
        return whole("stored record is not {version, value}; defaults used")
    version = stored.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        return whole(f"stored version {version!r} is invalid; defaults used")
    if version > group.version:
        return whole(f"stored version {version} is newer than {group.version}; defaults used")
    value: dict[str, Any] = dict(stored["value"])
    try:
        for v in range(version, group.version):
            value = group.migrations[v](value)
    except Exception as exc:  # a broken stored value must never crash the panel
        return whole(f"migration from version {version} failed: {exc!r}; defaults used")
    merged = {**encode(group.defaults()), **value}
    for _ in range(1000):
        try:
            return validate_group(group, merged), problems
        except ValidationError as exc:
            path = exc.field or group.name
            problems.append(Problem(group.name, path, exc.message))
            if not _drop(merged, group.name, path):
                return whole("could not repair the stored value; defaults used")
            merged = {**encode(group.defaults()), **merged}
    return whole("too many invalid fields; defaults used")


def origin_matches(pattern: str, origin: str) -> bool:
    """Whether ``origin`` (``https://a.b.com``) matches ``pattern`` (``https://*.b.com``)."""
    if pattern == "*":
        return True
    rx = re.escape(pattern).replace(r"\*\.", r"(?:[^/]+\.)?").replace(r"\*", r"[^/]*")
    return re.fullmatch(rx, origin, re.I) is not None
