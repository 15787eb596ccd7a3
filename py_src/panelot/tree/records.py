"""Typed records of the ``threads`` and ``nodes`` tables.

Python code uses these dataclasses with snake_case names; IndexedDB holds their wire
form with the data model's camelCase names (``threadId``, ``parentId``, ``leafId``
...), so Dexie code reads the same records. :func:`node_from_wire` and :func:`thread_from_wire`
validate at the boundary; errors name the wire field. Ids (a record's ``id``,
``threadId``, ``parentId``, ``leafId``) are :data:`~panelot.codec.Id`; references in a
payload (``attachmentId``, ``itemId``) are plain strings (an imported image whose bytes
were gone keeps an empty ``attachmentId``). :func:`check_thread_bounds`
holds the length limits of titles, tags and folder names, which every write applies.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from panelot.codec import Id, decode, encode
from panelot.idb.errors import ValidationError
from panelot.tree.provider_state import ProviderState, check_provider_state

__all__ = [
    "MAX_FOLDER_CHARS",
    "MAX_TAGS",
    "MAX_TAG_CHARS",
    "MAX_TITLE_CHARS",
    "PAYLOAD_TYPES",
    "ApprovalDecision",
    "AssistantMessage",
    "ContentBlock",
    "ContextBlock",
    "FileBlock",
    "ImageBlock",
    "InteractionResponse",
    "NodeType",
    "Payload",
    "SystemNotice",
    "TextBlock",
    "RequestCut",
    "ThreadMeta",
    "ThreadNode",
    "ShownCount",
    "ThreadStats",
    "ToolCall",
    "ToolResult",
    "TurnContext",
    "Usage",
    "UserMessage",
    "check_thread_bounds",
    "node_from_wire",
    "payload_from_wire",
    "thread_from_wire",
    "thread_to_wire",
]

MAX_TITLE_CHARS = 300
"""Longest thread title a write accepts (code points)."""
MAX_TAG_CHARS = 64
"""Longest tag a write accepts (code points)."""
MAX_TAGS = 50
"""Most tags one thread may have."""
MAX_FOLDER_CHARS = 120
"""Longest folder name (``folderId``) a write accepts (code points)."""

NodeType: TypeAlias = Literal[
    "user_message",
    "assistant_message",
    "tool_call",
    "tool_result",
    "approval_decision",
    "interaction_response",
    "turn_context",
    "system_notice",
]


@dataclass(slots=True)
class TextBlock:
    """Plain text content."""

    type: Literal["text"]
    text: str


@dataclass(slots=True)
class ImageBlock:
    """An image kept in the ``attachments`` table."""

    type: Literal["image"]
    attachment_id: str
    mime: str | None = None
    name: str | None = None
    w: int | None = None
    h: int | None = None
    evicted: bool | None = None


@dataclass(slots=True)
class FileBlock:
    """A file kept in the ``attachments`` table."""

    type: Literal["file"]
    attachment_id: str
    name: str
    mime: str | None = None
    size: int | None = None
    evicted: bool | None = None


ContentBlock: TypeAlias = TextBlock | ImageBlock | FileBlock


@dataclass(slots=True)
class ContextBlock:
    """Page or selection context attached to a user message."""

    type: Literal["page", "selection", "page_text", "tab"]
    text: str | None = None
    url: str | None = None
    title: str | None = None
    attachment_id: str | None = None


@dataclass(slots=True)
class Usage:
    """Token usage and cost of one assistant turn."""

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int | None = None
    cost_usd: float | None = None


@dataclass(slots=True)
class UserMessage:
    """A user's message."""

    content: list[ContentBlock]
    attached_context: list[ContextBlock] | None = None
    deleted: bool | None = None


@dataclass(slots=True)
class AssistantMessage:
    """The final assistant message of a turn (streaming deltas are never nodes).

    ``interrupted`` (an extension field; absent: the provider finished the reply) says
    the reply ended early and ``content`` holds the text that had arrived: ``"stopped"``
    by the user, ``"cut_off"`` when the stream broke off. Such a reply keeps some text
    (:func:`payload_from_wire` refuses one without); later requests send it as any reply.
    """

    content: list[ContentBlock]
    model: str
    connection_id: str
    reasoning: str | None = None
    provider_state: ProviderState | None = None
    usage: Usage | None = None
    interrupted: Literal["stopped", "cut_off"] | None = None
    deleted: bool | None = None


@dataclass(slots=True)
class ToolCall:
    """A tool call requested by the model."""

    item_id: str
    tool_name: str
    params: dict[str, Any]
    level: Literal["L0", "L1", "L2", "mcp", "builtin"]
    deleted: bool | None = None


@dataclass(slots=True)
class ToolResult:
    """The result of a tool call; large UI details belong in attachments."""

    item_id: str
    ok: bool
    content_for_llm: list[ContentBlock]
    details: Any = None
    deleted: bool | None = None


@dataclass(slots=True)
class ApprovalDecision:
    """A user's decision on an approval request."""

    approval_id: str
    request: dict[str, Any]
    decision: Literal["approved", "denied"]
    ts: int
    deleted: bool | None = None


@dataclass(slots=True)
class InteractionResponse:
    """A response to an interaction request."""

    interaction_id: str
    request: dict[str, Any]
    response: Any
    responded_at: int
    deleted: bool | None = None


@dataclass(slots=True)
class TurnContext:
    """The environment of a turn, written at its start; restores it on recovery."""

    turn_id: str
    model: str
    permission_policy: Any
    active_skills: list[str]
    deleted: bool | None = None


@dataclass(slots=True)
class SystemNotice:
    """A user-visible notice that never enters the model's history."""

    text: str
    level: Literal["info", "warning", "error"] | None = None
    code: str | None = None
    deleted: bool | None = None


Payload: TypeAlias = (
    UserMessage
    | AssistantMessage
    | ToolCall
    | ToolResult
    | ApprovalDecision
    | InteractionResponse
    | TurnContext
    | SystemNotice
)

PAYLOAD_TYPES: dict[str, type[Any]] = {
    "user_message": UserMessage,
    "assistant_message": AssistantMessage,
    "tool_call": ToolCall,
    "tool_result": ToolResult,
    "approval_decision": ApprovalDecision,
    "interaction_response": InteractionResponse,
    "turn_context": TurnContext,
    "system_notice": SystemNotice,
}
"""The payload class of each node type."""


@dataclass(slots=True)
class ThreadNode:
    """One node of a conversation tree. Child ids are derived, never stored."""

    id: Id
    thread_id: Id
    parent_id: Id | None
    seq: int
    ts: int
    type: NodeType
    payload: Payload


@dataclass(slots=True)
class ThreadStats:
    """What the thread's turns have cost, every node ever appended counted.

    ``turns`` counts every assistant message ever appended (regenerated versions and
    tombstoned ones included), ``total_tokens`` and ``cost_usd`` add up their usage: what
    was spent, not what the current branch shows (that is :class:`ShownCount`).
    """

    turns: int = 0
    total_tokens: int = 0
    cost_usd: float = 0.0


@dataclass(slots=True)
class ShownCount:
    """Extension field ``shown``: what the visible path ending at ``leaf_id`` shows.

    ``messages`` counts its shown nodes (what ``thread.snapshot`` lists), ``turns`` its
    live user messages. It holds only while ``leaf_id`` is the thread's leaf
    (:mod:`panelot.tree.shown`).
    """

    leaf_id: Id | None
    turns: int = 0
    messages: int = 0


@dataclass(slots=True)
class RequestCut:
    """Extension field ``requestCut``: what the overflow rescue cut for ``model``.

    Written by ``thread.rescued`` after a rescued retry's reply is stored; later requests
    for the same ``model`` apply it (:mod:`panelot.request.rescue`). ``item_keys`` name the
    items cut (an attachment id, or ``<nodeId>#c<i>`` / ``<nodeId>#e<i>``);
    ``context_budget`` the smaller history budget (``None``: the connection's); ``at``
    when it was written (ms).
    """

    model: str
    item_keys: list[str] = field(default_factory=list)
    context_budget: int | None = None
    at: int = 0


@dataclass(slots=True)
class ThreadMeta:
    """The light thread record the conversation list reads."""

    id: Id
    title: str
    created_at: int
    updated_at: int
    leaf_id: Id | None
    tags: list[str] = field(default_factory=list)
    pinned: bool = False
    archived: bool = False
    folder_id: str | None = None
    preset: str | None = None
    parent_thread_id: Id | None = None
    stats: ThreadStats = field(default_factory=ThreadStats)
    scope_origins: list[str] = field(default_factory=list)
    deleting: bool | None = None
    deleting_since: int | None = None
    """Extension field: set while ``thread.delete`` runs; such a thread refuses commands."""
    shown: ShownCount | None = None
    """Extension field: the visible path's counts (:mod:`panelot.tree.shown`)."""
    request_cut: RequestCut | None = None
    """Extension field: the overflow rescue's recorded cut (:class:`RequestCut`)."""


def payload_from_wire(
    node_type: str, data: Any, path: str = "payload", type_field: str = "type"
) -> Payload:
    """Validate a payload against its node type (``type_field`` names where the type is)."""
    cls = PAYLOAD_TYPES.get(node_type)
    if cls is None:
        raise ValidationError(
            f"{type_field}: unknown node type {node_type!r}; "
            f"expected one of {sorted(PAYLOAD_TYPES)}",
            field=type_field,
        )
    payload: Payload = decode(cls, data, path)
    if isinstance(payload, AssistantMessage) and isinstance(data, dict):
        check_provider_state(data.get("providerState"), f"{path}.providerState")
        _check_interrupted(payload, path)
    return payload


def _check_interrupted(payload: AssistantMessage, path: str) -> None:
    """An interrupted reply is the text that arrived: it needs some (else nothing is kept)."""
    if payload.interrupted is None:
        return
    if not any(isinstance(b, TextBlock) and b.text for b in payload.content):
        where = f"{path}.interrupted"
        raise ValidationError(
            f"{where}: an interrupted reply must keep the text that arrived "
            "(a non-empty text block); with none, store no reply",
            field=where,
        )


def node_from_wire(data: Any, path: str = "node") -> ThreadNode:
    """Validate a stored or imported node record."""
    if not isinstance(data, dict):
        raise ValidationError(f"{path}: must be an object", field=path)
    envelope = {k: v for k, v in data.items() if k != "payload"}
    node_type = envelope.get("type")
    if not isinstance(node_type, str):
        raise ValidationError(f"{path}.type: must be a node type string", field=f"{path}.type")
    payload = payload_from_wire(node_type, data.get("payload"), f"{path}.payload", f"{path}.type")
    envelope["payload"] = {}
    node = decode(_NodeEnvelope, envelope, path)
    return ThreadNode(
        node.id, node.thread_id, node.parent_id, node.seq, node.ts, node.type, payload
    )


@dataclass(slots=True)
class _NodeEnvelope:
    id: Id
    thread_id: Id
    parent_id: Id | None
    seq: int
    ts: int
    type: NodeType
    payload: dict[str, Any]


def thread_from_wire(data: Any, path: str = "thread") -> ThreadMeta:
    """Validate the types of a stored or imported thread record.

    The length limits (:func:`check_thread_bounds`) are not applied here: a stored
    record written before them, or by other code, still loads. Every write path checks
    them on what it writes.
    """
    return decode(ThreadMeta, data, path)


def _named(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def _bounded_text(value: Any, name: str, limit: int) -> None:
    if not isinstance(value, str) or len(value) > limit:
        raise ValidationError(f"{name}: must be a string of at most {limit} characters", field=name)


def check_thread_bounds(fields: Mapping[str, Any], prefix: str = "") -> None:
    """Refuse a title, tag list, tag or folder name (``folderId``) beyond its limit.

    Only the fields present in ``fields`` are checked (a patch checks what it changes);
    ``tags`` and ``folderId`` may be ``None``. The error names the field under
    ``prefix`` (``patch.title``, ``thread.tags[3]``; bare ``title``, ``tags[3]`` when
    ``prefix`` is empty). Lengths count code points; free text keeps lone surrogates.
    """
    if "title" in fields:
        _bounded_text(fields["title"], _named(prefix, "title"), MAX_TITLE_CHARS)
    tags = fields.get("tags")
    if tags is not None:
        where = _named(prefix, "tags")
        if not isinstance(tags, list) or len(tags) > MAX_TAGS:
            raise ValidationError(
                f"{where}: must be a list of at most {MAX_TAGS} strings", field=where
            )
        for i, tag in enumerate(tags):
            _bounded_text(tag, f"{where}[{i}]", MAX_TAG_CHARS)
    folder = fields.get("folderId")
    if folder is not None:
        _bounded_text(folder, _named(prefix, "folderId"), MAX_FOLDER_CHARS)


def thread_to_wire(thread: ThreadMeta) -> dict[str, Any]:
    """Return the stored (camelCase) form of a thread."""
    out: dict[str, Any] = encode(thread)
    return out
