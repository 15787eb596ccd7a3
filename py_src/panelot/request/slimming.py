"""Request-side context slimming: a pure, deterministic plan over a session context.

Stored records and bytes are never changed; only the request derived from
:func:`panelot.tree.context.session_context` is slimmed. :func:`slim_context` is a pure
function of the context and the metadata of the attachments it names (no storage
access, no clock), so the same tree gives the same request, byte for byte: a provider's
prompt cache sees a stable prefix. Three rules, each switchable in :class:`SlimOptions`:

* **Seen images.** An image block followed on the path by an assistant message that
  answers a turn (one written as an ``assistant_message`` node, i.e. carrying
  ``model``; a bare tool-call carrier does not count) was already seen by the model. It
  becomes the text ``[Figure N: <title or file name>]``: ``N`` numbers the images of
  the path by first appearance (the same attachment keeps its number), the label is
  the attachment's ``meta.title``, else the block's ``name``, else ``image``.
* **Unseen-image budget.** If the distinct unseen images weigh more than the budget
  (their records' ``size``; default 8,000,000 bytes), the oldest are sent as
  thumbnails until the full-size rest fits. The images of the newest message holding
  unseen images are never thumbnailed, so the newest image always goes at full size.
* **Stale attachments.** A page-context entry (``attachedContext``) or a file block
  that is not in the newest message carrying such items, has at least 3 user messages
  after it, and is at least 8,000 characters long becomes a one-line stub that depends
  only on the item (its kind, title/URL or name, and length), so it never changes
  again. "Characters" is ``len(text)`` (code points) for inline text; for an item
  backed by an attachment (a ``page_text`` entry with ``attachmentId``, a file block)
  it is the record's byte ``size``: the UTF-8 length, equal to the character count for
  ASCII and an upper bound otherwise. Reading a Blob only to count it would cost what
  the stub saves.

  A stale item backed by an attachment that has a done summary
  (:mod:`panelot.request.summaries`; ``summaries`` maps its id to the summary's text)
  is sent as ``[Summary of <label> (<size>): <text>]`` instead of the stub. An image
  is never replaced by a summary.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from panelot.idb.errors import ValidationError

__all__ = [
    "DEFAULT_IMAGE_BUDGET",
    "STALE_CHARS",
    "STALE_TURNS",
    "SlimOptions",
    "SlimResult",
    "own_message",
    "referenced_attachments",
    "slim_context",
]

DEFAULT_IMAGE_BUDGET = 8_000_000
"""Default budget for the bytes of unseen images in one request (8 MB)."""

STALE_TURNS = 3
"""An item is stale once at least this many user messages follow it."""

STALE_CHARS = 8_000
"""...and it is at least this many characters long."""

_LABEL_LIMIT = 120
_CONTEXT_KINDS = {
    "page": "page context",
    "selection": "selection",
    "page_text": "page text",
    "tab": "tab context",
}


@dataclass(frozen=True, slots=True)
class SlimOptions:
    """Which slimming rules apply; ``image_budget=None`` turns the image budget off."""

    seen_images: bool = True
    image_budget: int | None = DEFAULT_IMAGE_BUDGET
    stale_stubs: bool = True

    def __post_init__(self) -> None:
        for name in ("seen_images", "stale_stubs"):
            if not isinstance(getattr(self, name), bool):
                raise ValidationError(f"{name}: must be true or false", field=name)
        budget = self.image_budget
        if budget is not None and (
            not isinstance(budget, int) or isinstance(budget, bool) or budget < 0
        ):
            raise ValidationError(
                "image_budget: must be an integer >= 0 or null", field="imageBudget"
            )


@dataclass(slots=True)
class SlimResult:
    """The slimmed context and what was decided, every list in first-appearance order."""

    context: dict[str, Any]
    full: list[str] = field(default_factory=list)
    """Images sent with their pixels at full size."""
    thumbnails: list[str] = field(default_factory=list)
    """Images to send as thumbnails (over the unseen-image budget)."""
    seen: list[str] = field(default_factory=list)
    """Images that became ``[Figure N: ...]`` placeholders."""
    stale: int = 0
    """How many page-context entries and file blocks became stubs."""
    unseen_bytes: int = 0
    """Total size of the distinct unseen images, before thumbnails."""
    stale_ids: list[str] = field(default_factory=list)
    """Attachments behind the stale items (stubbed or summarized)."""
    summaries: list[str] = field(default_factory=list)
    """Attachments whose stale item was sent as its summary."""


def _blocks(message: Mapping[str, Any]) -> list[Any]:
    content = message.get("content")
    return content if isinstance(content, list) else []


def _entries(message: Mapping[str, Any]) -> list[Any]:
    entries = message.get("attachedContext")
    return entries if isinstance(entries, list) and message.get("role") == "user" else []


def _image_id(block: Any) -> str | None:
    if isinstance(block, dict) and block.get("type") == "image":
        ident = block.get("attachmentId")
        return ident if isinstance(ident, str) else None
    return None


def referenced_attachments(context: Mapping[str, Any]) -> list[str]:
    """Ids of the attachments the context's image/file blocks and context entries name."""
    found: dict[str, None] = {}
    for message in context.get("messages", []):
        for item in [*_blocks(message), *_entries(message)]:
            if isinstance(item, dict) and item.get("type") != "text":
                ident = item.get("attachmentId")
                if isinstance(ident, str):
                    found[ident] = None
    return list(found)


def _one_line(text: Any) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= _LABEL_LIMIT else flat[: _LABEL_LIMIT - 1] + "…"


def _size(info: Mapping[str, Any] | None) -> int:
    size = info.get("size") if info else None
    return size if isinstance(size, int) and not isinstance(size, bool) else 0


def _last_answer(messages: list[dict[str, Any]]) -> int:
    """Index of the last assistant message that answers a turn (-1 if none)."""
    last = -1
    for i, message in enumerate(messages):
        if message.get("role") == "assistant" and "model" in message:
            last = i
    return last


def _figure_label(block: dict[str, Any], info: Mapping[str, Any] | None) -> str:
    meta = info.get("meta") if info else None
    title = meta.get("title") if isinstance(meta, dict) else None
    return _one_line(title or block.get("name") or "image")


def _apply_images(
    messages: _Messages,
    attachments: Mapping[str, Mapping[str, Any]],
    options: SlimOptions,
    out: SlimResult,
) -> None:
    """Seen images become placeholders; the budget picks thumbnails among the unseen."""
    answered = _last_answer(messages.items) if options.seen_images else -1
    figures: dict[str, int] = {}
    unseen: list[tuple[int, str]] = []
    for i, message in enumerate(messages.items):
        for j, block in enumerate(_blocks(message)):
            ident = _image_id(block)
            if ident is None:
                continue
            number = figures.setdefault(ident, len(figures) + 1)
            if i < answered:
                label = _figure_label(block, attachments.get(ident))
                text = f"[Figure {number}: {label}]"
                placeholder = {"type": "text", "text": text, "seen": True, "attachmentId": ident}
                messages.own(i)["content"][j] = placeholder
                out.seen.append(ident)
            else:
                unseen.append((i, ident))
    out.seen = list(dict.fromkeys(out.seen))
    order = list(dict.fromkeys(ident for _, ident in unseen))
    out.unseen_bytes = sum(_size(attachments.get(ident)) for ident in order)
    out.thumbnails = _over_budget(unseen, order, attachments, options.image_budget)
    chosen = set(out.thumbnails)
    out.full = [ident for ident in order if ident not in chosen]


def _over_budget(
    unseen: list[tuple[int, str]],
    order: list[str],
    attachments: Mapping[str, Mapping[str, Any]],
    budget: int | None,
) -> list[str]:
    """The oldest unseen images to thumbnail so that the full-size rest fits ``budget``."""
    if budget is None or not unseen:
        return []
    newest = max(i for i, _ in unseen)
    protected = {ident for i, ident in unseen if i == newest}
    total = sum(_size(attachments.get(ident)) for ident in order)
    chosen: list[str] = []
    for ident in order:
        if total <= budget:
            break
        size = _size(attachments.get(ident))
        if ident in protected or size == 0:
            continue
        chosen.append(ident)
        total -= size
    return chosen


def _items(messages: list[dict[str, Any]]) -> Iterator[tuple[int, str, int, dict[str, Any]]]:
    """``(message index, "entry"|"file", position, item)`` for every stale-rule candidate."""
    for i, message in enumerate(messages):
        for k, entry in enumerate(_entries(message)):
            if isinstance(entry, dict):
                yield i, "entry", k, entry
        for j, block in enumerate(_blocks(message)):
            if isinstance(block, dict) and block.get("type") == "file":
                yield i, "file", j, block


def _length(item: dict[str, Any], attachments: Mapping[str, Mapping[str, Any]]) -> tuple[int, str]:
    """``(length, unit)``: characters of inline text, else the attachment's bytes."""
    text = item.get("text")
    if item.get("type") != "file" and isinstance(text, str):
        return len(text), "characters"
    ident = item.get("attachmentId")
    size = _size(attachments.get(ident)) if isinstance(ident, str) else 0
    if size == 0 and isinstance(item.get("size"), int):
        size = max(int(item["size"]), 0)
    return size, "bytes"


def _stub(item: dict[str, Any], length: int, unit: str) -> str:
    if item.get("type") == "file":
        name = _one_line(item.get("name") or item.get("attachmentId") or "file")
        return f"[Earlier file omitted: {name} ({length:,} {unit})]"
    kind = _CONTEXT_KINDS.get(str(item.get("type")), "context")
    parts = [_one_line(item[k]) for k in ("title", "url") if isinstance(item.get(k), str)]
    label = " — ".join(p for p in parts if p) or "untitled"
    return f"[Earlier {kind} omitted: {label} ({length:,} {unit})]"


def _amount(length: int, unit: str) -> str:
    """``2.1 MB`` from a million bytes up, else ``9,000 bytes`` / ``9,000 characters``."""
    if unit == "bytes" and length >= 1_000_000:
        return f"{length / 1_000_000:.1f} MB"
    return f"{length:,} {unit}"


def _summary(item: dict[str, Any], length: int, unit: str, summary: str) -> str:
    if item.get("type") == "file":
        label = _one_line(item.get("name") or item.get("attachmentId") or "file")
    else:
        kind = _CONTEXT_KINDS.get(str(item.get("type")), "context")
        parts = [_one_line(item[k]) for k in ("title", "url") if isinstance(item.get(k), str)]
        label = f"{kind}: " + (" — ".join(p for p in parts if p) or "untitled")
    return f"[Summary of {label} ({_amount(length, unit)}): {summary}]"


def _apply_stale(
    messages: _Messages,
    attachments: Mapping[str, Mapping[str, Any]],
    summaries: Mapping[str, str],
    out: SlimResult,
) -> int:
    """Replace stale page-context entries and file blocks by stubs (or their summaries).

    Returns how many became stubs; ``out`` gets the stale items' attachments and those
    sent as summaries.
    """
    items = list(_items(messages.items))
    if not items:
        return 0
    newest = max(i for i, _, _, _ in items)
    users_after = [0] * len(messages.items)
    count = 0
    for i in range(len(messages.items) - 1, -1, -1):
        users_after[i] = count
        count += messages.items[i].get("role") == "user"
    stubbed = 0
    for i, where, pos, item in items:
        length, unit = _length(item, attachments)
        if i == newest or users_after[i] < STALE_TURNS or length < STALE_CHARS:
            continue
        ident = item.get("attachmentId")
        backed = isinstance(ident, str) and ident in attachments
        if backed:
            out.stale_ids.append(str(ident))
        summary = summaries.get(str(ident)) if backed else None
        if summary is not None:
            text, mark = _summary(item, length, unit, summary), "summary"
            out.summaries.append(str(ident))
        else:
            text, mark = _stub(item, length, unit), "stale"
            stubbed += 1
        if where == "file":
            messages.own(i)["content"][pos] = {
                "type": "text",
                "text": text,
                mark: True,
                "attachmentId": ident,
            }
        else:
            kept = {k: item[k] for k in ("type", "url", "title") if item.get(k) is not None}
            messages.own(i)["attachedContext"][pos] = {**kept, "text": text, mark: True}
    out.stale_ids = list(dict.fromkeys(out.stale_ids))
    out.summaries = list(dict.fromkeys(out.summaries))
    return stubbed


def own_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``message`` whose block and entry lists may be written to.

    The rules only ever replace an item of ``content`` or ``attachedContext``, never
    change one, so copying those two lists (not the blocks in them) keeps the input
    unchanged.
    """
    own = dict(message)
    for key in ("content", "attachedContext"):
        if isinstance(own.get(key), list):
            own[key] = list(own[key])
    return own


class _Messages:
    """The request's messages, each copied (:func:`own_message`) only when a rule writes to it.

    Most messages of a long thread pass every rule unchanged: copying all of them took
    a third of a 10,000-message request's slimming.
    """

    __slots__ = ("items", "_owned")

    def __init__(self, messages: list[dict[str, Any]]) -> None:
        self.items = list(messages)
        self._owned: set[int] = set()

    def own(self, i: int) -> dict[str, Any]:
        """Message ``i``, copied on the first call so that it may be written to."""
        if i not in self._owned:
            self.items[i] = own_message(self.items[i])
            self._owned.add(i)
        return self.items[i]


def slim_context(
    context: Mapping[str, Any],
    attachments: Mapping[str, Mapping[str, Any]],
    options: SlimOptions | None = None,
    summaries: Mapping[str, str] | None = None,
) -> SlimResult:
    """Apply the slimming rules to a copy of ``context`` (the input is not changed).

    The copy shares with the input the messages and blocks the rules leave alone: write
    to a message of the result only through a copy (:func:`own_message`).

    ``attachments`` maps attachment id to its record's metadata (``size``, ``meta``);
    an id missing from it counts as 0 bytes. Placeholder blocks are
    ``{type: "text", text, seen: true, attachmentId}``; stale file blocks become
    ``{type: "text", text, stale: true, attachmentId}`` and stale context entries
    ``{type, url?, title?, text, stale: true}`` (no ``attachmentId``, so nothing reads
    the original). Image blocks to send keep their shape: the result's ``full`` and
    ``thumbnails`` say how each is sent.

    ``summaries`` maps an attachment id to its done summary's text: a stale item backed
    by one becomes ``{type: "text", text: "[Summary of …]", summary: true,
    attachmentId}`` (a file block) or ``{type, url?, title?, text, summary: true}`` (a
    context entry) instead of its stub.
    """
    opts = options or SlimOptions()
    messages = _Messages(context.get("messages", []))
    out = SlimResult({**context, "messages": messages.items})
    _apply_images(messages, attachments, opts, out)
    if opts.stale_stubs:
        out.stale = _apply_stale(messages, attachments, summaries or {}, out)
    return out
