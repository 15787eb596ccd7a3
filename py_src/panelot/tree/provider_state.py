"""``providerState``: provider replay state of an assistant node, strictly bounded.

Only Anthropic's signed ``thinking`` blocks and ``redacted_thinking`` blocks are
accepted: they must accompany a later tool-result request unchanged. Anything else,
and anything over the limits below, is refused with a ValidationError naming the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from panelot.idb.errors import ValidationError

__all__ = [
    "MAX_BLOCKS",
    "MAX_BLOCK_CHARS",
    "MAX_SIGNATURE_CHARS",
    "MAX_TOTAL_CHARS",
    "ProviderState",
    "RedactedThinkingBlock",
    "ThinkingBlock",
    "check_provider_state",
]

MAX_BLOCKS = 64
"""Most blocks one assistant node may carry."""
MAX_BLOCK_CHARS = 200_000
"""Longest ``thinking`` text or ``redacted_thinking`` data."""
MAX_SIGNATURE_CHARS = 16_384
"""Longest signature."""
MAX_TOTAL_CHARS = 1_000_000
"""Most characters over all blocks."""


@dataclass(slots=True)
class ThinkingBlock:
    """A signed thinking block, replayed verbatim."""

    type: Literal["thinking"]
    thinking: str
    signature: str


@dataclass(slots=True)
class RedactedThinkingBlock:
    """An encrypted (redacted) thinking block, replayed verbatim."""

    type: Literal["redacted_thinking"]
    data: str


@dataclass(slots=True)
class ProviderState:
    """Replay state: the provider and its blocks, in order."""

    provider: Literal["anthropic"]
    blocks: list[ThinkingBlock | RedactedThinkingBlock]


ProviderStateWire: TypeAlias = dict[str, Any]


def check_provider_state(value: Any, path: str = "providerState") -> None:
    """Enforce the count and size limits (the shape is checked by the codec)."""
    if value is None:
        return
    blocks = value.get("blocks") if isinstance(value, dict) else None
    if not isinstance(blocks, list):
        raise ValidationError(f"{path}.blocks: must be a list", field=f"{path}.blocks")
    if len(blocks) > MAX_BLOCKS:
        raise ValidationError(
            f"{path}.blocks: at most {MAX_BLOCKS} blocks, got {len(blocks)}", field=f"{path}.blocks"
        )
    total = 0
    for i, block in enumerate(blocks):
        where = f"{path}.blocks[{i}]"
        for key, limit in (
            ("thinking", MAX_BLOCK_CHARS),
            ("data", MAX_BLOCK_CHARS),
            ("signature", MAX_SIGNATURE_CHARS),
        ):
            text = block.get(key) if isinstance(block, dict) else None
            if isinstance(text, str):
                if len(text) > limit:
                    raise ValidationError(
                        f"{where}.{key}: longer than {limit} characters", field=f"{where}.{key}"
                    )
                total += len(text)
        if (
            isinstance(block, dict)
            and block.get("type") == "thinking"
            and not block.get("signature")
        ):
            raise ValidationError(
                f"{where}.signature: must not be empty", field=f"{where}.signature"
            )
    if total > MAX_TOTAL_CHARS:
        raise ValidationError(f"{path}: more than {MAX_TOTAL_CHARS} characters in all", field=path)
