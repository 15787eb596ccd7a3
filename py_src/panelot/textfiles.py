"""Which attached files are text, and their text: shared by requests and search.

A file is text-like by its MIME type (``text/*``, JSON, XML, YAML, Markdown, CSV, source
code), or by its name's suffix when the browser gave no type; its text is its bytes
decoded as UTF-8. :mod:`panelot.request.file_text` sends such files' text to a model;
:mod:`panelot.search` indexes it. Pure: no storage, no clock.
"""

from __future__ import annotations

from typing import Any

__all__ = ["decode_text", "is_text_like"]

_TEXT_TYPES = {
    "application/json",
    "application/ld+json",
    "application/x-ndjson",
    "application/xml",
    "application/javascript",
    "application/x-javascript",
    "application/ecmascript",
    "application/typescript",
    "application/x-sh",
    "application/x-python",
    "application/x-yaml",
    "application/yaml",
    "application/toml",
    "application/sql",
    "application/x-tex",
    "application/csv",
}
_TEXT_SUFFIXES = {
    "txt", "md", "markdown", "rst", "csv", "tsv", "json", "jsonl", "ndjson", "xml", "yaml",
    "yml", "toml", "ini", "cfg", "conf", "log", "diff", "patch", "tex", "html", "htm",
    "css", "scss", "py", "js", "mjs", "cjs", "ts", "tsx", "jsx", "java", "kt", "swift",
    "c", "h", "cc", "cpp", "hpp", "cs", "go", "rs", "rb", "php", "pl", "lua", "r", "sh",
    "bash", "zsh", "sql", "vue", "svelte",
}  # fmt: skip


def is_text_like(mime: Any, name: Any) -> bool:
    """Whether a file is text by its MIME type, or by its name's suffix when untyped."""
    kind = mime.split(";", 1)[0].strip().lower() if isinstance(mime, str) else ""
    if kind.startswith("text/") or kind in _TEXT_TYPES or kind.endswith(("+json", "+xml")):
        return True
    if kind not in ("", "application/octet-stream"):
        return False
    suffix = name.rsplit(".", 1)[-1].lower() if isinstance(name, str) and "." in name else ""
    return suffix in _TEXT_SUFFIXES


def decode_text(data: bytes) -> str | None:
    """The text of UTF-8 bytes (a byte-order mark dropped), or ``None`` for other bytes."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
