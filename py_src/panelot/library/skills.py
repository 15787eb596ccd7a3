"""The skills repository (``skills: 'id, name, enabled, sourceRef'``).

A stored skill is ``{id, name, description?, body, enabled, sourceRef?, createdAt,
updatedAt}``. ``enabled`` is stored as the number 1 or 0, never as a boolean:
IndexedDB cannot index booleans, so a boolean would leave the ``enabled`` index empty
(see :mod:`panelot.library.common`). :class:`Skill` and the wire form use ``bool``.

Names are indexed but not unique: :func:`skills_by_name` returns a list. Putting a
skill under an existing id replaces it and keeps its ``createdAt``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from panelot.clock import Clock, new_id, now_ms
from panelot.codec import Id, decode, encode
from panelot.idb import Transaction
from panelot.idb.errors import ValidationError
from panelot.library.common import Target, check_id, check_text, flag_from_db, flag_to_db, within

__all__ = [
    "MAX_SKILL_BODY_BYTES",
    "MAX_SKILL_DESCRIPTION_CHARS",
    "MAX_SKILL_NAME_CHARS",
    "MAX_SKILL_SOURCE_REF_CHARS",
    "SKILL_TABLES",
    "Skill",
    "SkillInput",
    "check_skill_input",
    "delete_skill",
    "enabled_skills",
    "get_skill",
    "list_skills",
    "put_skill",
    "skill_from_record",
    "skill_to_wire",
    "skills_by_name",
]

SKILL_TABLES = ("skills",)
"""The tables a skill transaction needs."""

MAX_SKILL_NAME_CHARS = 200
"""Longest skill name."""
MAX_SKILL_DESCRIPTION_CHARS = 4_000
"""Longest skill description."""
MAX_SKILL_BODY_BYTES = 1024 * 1024
"""Largest skill body: 1 MiB of UTF-8."""
MAX_SKILL_SOURCE_REF_CHARS = 2_000
"""Longest ``sourceRef`` (where the skill came from, e.g. a URL or plugin id)."""


@dataclass(slots=True)
class SkillInput:
    """What a caller puts: a skill without its timestamps (``id`` is generated if absent)."""

    name: str
    body: str
    id: str | None = None
    description: str | None = None
    enabled: bool = True
    source_ref: str | None = None


@dataclass(slots=True)
class Skill:
    """A stored skill, as the Python API sees it (``enabled`` is a real ``bool``)."""

    id: Id
    name: str
    body: str
    enabled: bool
    created_at: int
    updated_at: int
    description: str | None = None
    source_ref: str | None = None


def check_skill_input(skill: SkillInput, path: str = "skill") -> SkillInput:
    """Check a skill's sizes; return it. ValidationError names the wire field under ``path``."""
    if skill.id is not None:
        check_id(skill.id, f"{path}.id")
    check_text(skill.name, f"{path}.name", MAX_SKILL_NAME_CHARS)
    if not isinstance(skill.body, str):
        raise ValidationError(f"{path}.body: must be a string", field=f"{path}.body")
    size = len(skill.body.encode("utf-8", "surrogatepass"))
    if size > MAX_SKILL_BODY_BYTES:
        raise ValidationError(
            f"{path}.body: is {size} bytes, more than the limit of {MAX_SKILL_BODY_BYTES}",
            field=f"{path}.body",
        )
    if not isinstance(skill.enabled, bool):
        raise ValidationError(f"{path}.enabled: must be true or false", field=f"{path}.enabled")
    if skill.description is not None:
        check_text(
            skill.description, f"{path}.description", MAX_SKILL_DESCRIPTION_CHARS, min_chars=0
        )
    if skill.source_ref is not None:
        check_text(skill.source_ref, f"{path}.sourceRef", MAX_SKILL_SOURCE_REF_CHARS)
    return skill


def skill_to_wire(skill: Skill) -> dict[str, Any]:
    """The wire form of a skill (camelCase, ``enabled`` as a boolean)."""
    out: dict[str, Any] = encode(skill)
    return out


def skill_from_record(record: Any) -> Skill:
    """Validate a stored skill record and return it as a :class:`Skill`."""
    if not isinstance(record, dict):
        raise ValidationError("skill: the stored record is not an object", field="skill")
    wire = {**record, "enabled": flag_from_db(record.get("enabled"))}
    return decode(Skill, wire, f"skills[{record.get('id')!r}]")


def _to_record(skill: Skill) -> dict[str, Any]:
    return {**skill_to_wire(skill), "enabled": flag_to_db(skill.enabled)}


async def put_skill(target: Target, skill: SkillInput, clock: Clock = now_ms) -> Skill:
    """Insert or replace a skill; keep ``createdAt`` when its id exists. Return it."""
    check_skill_input(skill)
    skill_id = skill.id or new_id()

    async def body(tx: Transaction) -> Skill:
        table = tx.table("skills")
        existing = await table.get(skill_id)
        now = clock()
        created = existing.get("createdAt") if isinstance(existing, dict) else None
        stored = Skill(
            id=skill_id,
            name=skill.name,
            body=skill.body,
            enabled=skill.enabled,
            created_at=created if isinstance(created, int) else now,
            updated_at=now,
            description=skill.description,
            source_ref=skill.source_ref,
        )
        await table.put(_to_record(stored))
        return stored

    return await within(target, "rw", SKILL_TABLES, body)


async def get_skill(target: Target, skill_id: str) -> Skill | None:
    """Return the skill with id ``skill_id``, or ``None``."""

    async def body(tx: Transaction) -> Skill | None:
        record = await tx.table("skills").get(skill_id)
        return None if record is None else skill_from_record(record)

    return await within(target, "r", SKILL_TABLES, body)


async def delete_skill(target: Target, skill_id: str) -> bool:
    """Delete a skill; return whether it existed."""

    async def body(tx: Transaction) -> bool:
        table = tx.table("skills")
        if await table.get(skill_id) is None:
            return False
        await table.delete(skill_id)
        return True

    return await within(target, "rw", SKILL_TABLES, body)


async def skills_by_name(target: Target, name: str) -> list[Skill]:
    """Every skill named ``name`` (through the ``name`` index), in id order."""

    async def body(tx: Transaction) -> list[Any]:
        return await tx.table("skills").where("name").equals(name).to_list()

    return [skill_from_record(r) for r in await within(target, "r", SKILL_TABLES, body)]


async def enabled_skills(target: Target) -> list[Skill]:
    """Every enabled skill (through the ``enabled`` index, key 1), in id order."""

    async def body(tx: Transaction) -> list[Any]:
        return await tx.table("skills").where("enabled").equals(flag_to_db(True)).to_list()

    return [skill_from_record(r) for r in await within(target, "r", SKILL_TABLES, body)]


async def list_skills(
    target: Target, *, enabled: bool | None = None, name: str | None = None
) -> list[Skill]:
    """Skills sorted by name (then id), optionally only those named ``name`` or so enabled.

    ``name`` goes through the ``name`` index and ``enabled`` through the ``enabled``
    index; when both are given the name index is used and ``enabled`` filtered in memory.
    """

    async def body(tx: Transaction) -> list[Any]:
        table = tx.table("skills")
        if name is not None:
            return await table.where("name").equals(name).to_list()
        if enabled is not None:
            return await table.where("enabled").equals(flag_to_db(enabled)).to_list()
        return await table.order_by("name").to_list()

    skills = [skill_from_record(r) for r in await within(target, "r", SKILL_TABLES, body)]
    if enabled is not None:
        skills = [s for s in skills if s.enabled == enabled]
    return sorted(skills, key=lambda s: (s.name, s.id))
