"""Browsa history entries → Panelot node payloads (a linear path), as a plan.

* ``user`` / ``assistant`` entries become ``user_message`` / ``assistant_message``;
  string content is one text block; ``text`` parts are text blocks.
* ``image_url`` parts holding a ``data:`` URL become images: their bytes are decoded
  exactly, as a browser reads the URL (:func:`parse_data_url`: percent-decoding, then
  forgiving base64, so base64 wrapped in lines, spaced or unpadded decodes), and
  written as ``image`` attachments by the importer. A part whose bytes the layout does
  not hold — no URL, or a ``data:`` URL that does not decode to at least one byte —
  becomes an image block with an empty ``attachmentId`` and ``evicted: true`` (its MIME
  type kept when the URL names one), counted as ``imagesWithoutBytes``. Other URLs
  cannot be fetched offline; they become a text block ``[Image: <url>]`` and are
  counted as ``externalImages``.
* Entries whose text starts with :data:`PAGE_CONTEXT_PREFIX` are page contexts: their
  ``Title:`` / ``URL:`` header lines and body become a ``page`` context block
  (``videoSrc`` stands in for a missing URL), attached as ``attachedContext`` to the
  next user message; a trailing run becomes a user message with no content.
* Other roles and malformed entries are skipped and counted. ``imagesSeen`` stamps are
  request-side state and are not carried over.
"""

from __future__ import annotations

import base64
import binascii
import re
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from panelot.surrogates import replace_lone_surrogates

__all__ = [
    "PAGE_CONTEXT_PREFIX",
    "PlannedImage",
    "PlannedNode",
    "forgiving_base64",
    "parse_data_url",
    "plan_history",
]

PAGE_CONTEXT_PREFIX = "[Page context attached by browsa]"
"""The header browsa puts on page-context entries (its ``lib/constants.js``)."""

_WHITESPACE = " \t\n\f\r"
"""ASCII whitespace, as the URL and base64 rules of the web platform define it."""
_NO_WHITESPACE = str.maketrans("", "", _WHITESPACE)
_BASE64_ALPHABET = re.compile(r"[A-Za-z0-9+/]*")
_BASE64_PARAM = re.compile(r";[ ]*base64$", re.I)


@dataclass(slots=True)
class PlannedImage:
    """An image to store as an attachment: exact bytes and MIME type."""

    mime: str
    data: bytes
    name: str | None = None


@dataclass(slots=True)
class PlannedNode:
    """A node to append; ``images[i]`` fills the i-th image block of its content."""

    type: str
    payload: dict[str, Any]
    images: list[PlannedImage] = field(default_factory=list)


def forgiving_base64(text: str) -> bytes | None:
    """Decode base64 as browsers do (WHATWG "forgiving-base64 decode"); None if it is not.

    ASCII whitespace anywhere is ignored and the ``=`` padding may be left out; any
    other character outside the base64 alphabet, or a length that cannot be base64
    (one character past a multiple of four), is not base64.
    """
    text = text.translate(_NO_WHITESPACE)
    if len(text) % 4 == 0 and text.endswith("="):
        text = text[:-2] if text.endswith("==") else text[:-1]
    if len(text) % 4 == 1 or not _BASE64_ALPHABET.fullmatch(text):
        return None
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError):  # pragma: no cover - the checks above prevent it
        return None


def parse_data_url(url: str) -> tuple[str | None, bytes | None] | None:
    """A ``data:`` URL's MIME type and bytes, read as a browser reads it.

    None when ``url`` is not a ``data:`` URL. For one, ``(mime, data)``: ``mime`` is the
    lower-cased type before the first ``;`` (None when absent), ``data`` its bytes, or
    None when there is no ``,`` or the base64 body does not decode (the WHATWG data URL
    processor: the body is percent-decoded, then a ``;base64`` body is decoded by
    :func:`forgiving_base64`).
    """
    head = url.lstrip(_WHITESPACE)
    if head[:5].lower() != "data:":
        return None
    meta, comma, body = head[5:].rstrip(_WHITESPACE).partition(",")
    mime = meta.split(";", 1)[0].strip(_WHITESPACE).lower() or None
    if not comma:
        return mime, None
    # A URL is UTF-8 encoded as TextEncoder does: a lone surrogate becomes U+FFFD.
    data = urllib.parse.unquote_to_bytes(replace_lone_surrogates(body))
    if _BASE64_PARAM.search(meta.strip(_WHITESPACE)) is None:
        return mime, data
    return mime, forgiving_base64(data.decode("latin-1"))


def _image_url(part: dict[str, Any]) -> str | None:
    ref = part.get("image_url")
    if isinstance(ref, dict):
        ref = ref.get("url")
    return ref if isinstance(ref, str) else None


def _context_block(text: str, entry: dict[str, Any]) -> dict[str, Any]:
    rest = text[len(PAGE_CONTEXT_PREFIX) :].lstrip("\n")
    head, _, body = rest.partition("\n\n")
    block: dict[str, Any] = {"type": "page"}
    other: list[str] = []
    for line in head.splitlines():
        key, sep, value = line.partition(":")
        name = key.strip().lower() if sep else ""
        if name in ("title", "url"):
            if value.strip():
                block[name] = value.strip()
        elif line.strip():
            other.append(line)
    block["text"] = "\n".join([*other, body]).strip() if other else body
    if "url" not in block and isinstance(entry.get("videoSrc"), str):
        block["url"] = entry["videoSrc"]
    return block


@dataclass(slots=True)
class _Counts:
    messages: int = 0
    images: int = 0
    external_images: int = 0
    page_contexts: int = 0
    skipped_entries: int = 0
    images_without_bytes: int = 0


def _image_block(part: dict[str, Any], counts: _Counts) -> tuple[Any, PlannedImage | None]:
    """The block of an ``image_url`` part and the image to store (None when no bytes)."""
    url = _image_url(part) or ""
    parsed = parse_data_url(url) if url else (None, None)
    if parsed is None:
        counts.external_images += 1
        return {"type": "text", "text": f"[Image: {url[:2000]}]"}, None
    mime, data = parsed
    given = part.get("name")
    name = given if isinstance(given, str) and given else None
    block: dict[str, Any] = {"type": "image", "attachmentId": ""}
    if data:
        image = PlannedImage(mime or "application/octet-stream", data, name)
        block["mime"] = image.mime
        counts.images += 1
    else:  # the layout does not hold this image's bytes
        image = None
        if mime:
            block["mime"] = mime
        block["evicted"] = True
        counts.images_without_bytes += 1
    if name:
        block["name"] = name
    return block, image


def _content(entry: dict[str, Any], counts: _Counts) -> tuple[list[Any], list[PlannedImage]]:
    content = entry.get("content")
    if isinstance(content, str):
        return ([{"type": "text", "text": content}] if content else []), []
    blocks: list[Any] = []
    images: list[PlannedImage] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text" and isinstance(part.get("text"), str) and part["text"]:
            blocks.append({"type": "text", "text": part["text"]})
        elif part.get("type") == "image_url":
            block, image = _image_block(part, counts)
            blocks.append(block)
            if image is not None:
                images.append(image)
    return blocks, images


def _is_context(entry: dict[str, Any]) -> str | None:
    content = entry.get("content")
    text = content if isinstance(content, str) else None
    if isinstance(content, list) and content and isinstance(content[0], dict):
        first = content[0].get("text")
        text = first if isinstance(first, str) else None
    if entry.get("role") == "user" and text and text.startswith(PAGE_CONTEXT_PREFIX):
        return text
    return None


def plan_history(history: list[Any]) -> tuple[list[PlannedNode], dict[str, int]]:
    """Plan the nodes of one browsa history; return them and their counts."""
    counts = _Counts()
    nodes: list[PlannedNode] = []
    contexts: list[dict[str, Any]] = []
    carried: list[tuple[list[Any], list[PlannedImage]]] = []
    for entry in history:
        if not isinstance(entry, dict) or entry.get("role") not in ("user", "assistant"):
            counts.skipped_entries += 1
            continue
        context_text = _is_context(entry)
        if context_text is not None:
            contexts.append(_context_block(context_text, entry))
            counts.page_contexts += 1
            blocks, images = _content(entry, counts)
            carried.append(([b for b in blocks if b["type"] == "image"], images))
            continue
        blocks, images = _content(entry, counts)
        if entry["role"] == "user":
            for extra_blocks, extra_images in carried:
                blocks, images = [*extra_blocks, *blocks], [*extra_images, *images]
            payload: dict[str, Any] = {"content": blocks}
            if contexts:
                payload["attachedContext"] = contexts
            contexts, carried = [], []
            nodes.append(PlannedNode("user_message", payload, images))
        else:
            model = entry.get("model")
            provider = entry.get("provider")
            payload = {
                "content": blocks,
                "model": model if isinstance(model, str) else "unknown",
                "connectionId": provider if isinstance(provider, str) else "browsa",
            }
            nodes.append(PlannedNode("assistant_message", payload, images))
        counts.messages += 1
    if contexts:
        extra = [b for bs, _ in carried for b in bs]
        payload = {"content": extra, "attachedContext": contexts}
        nodes.append(PlannedNode("user_message", payload, [i for _, im in carried for i in im]))
        counts.messages += 1
    return nodes, {
        "messages": counts.messages,
        "images": counts.images,
        "imagesWithoutBytes": counts.images_without_bytes,
        "externalImages": counts.external_images,
        "pageContexts": counts.page_contexts,
        "skippedEntries": counts.skipped_entries,
    }
