"""Inputs read ahead of a command, too large for its JSON payload (a backup file).

A command's payload is JSON and its receipt's fingerprint is computed from it, so a
file cannot travel in it. The caller reads and checks the file first, stages what it
read here under the file's SHA-256, and sends a command whose payload names that
digest: the fingerprint then covers the file's contents, a replay of the submission
is recognised whatever upload it came from, and the handler takes the staged input in
its ``prepare`` step. Inputs live in this context's memory only, for one command.
"""

from __future__ import annotations

from typing import Any

from panelot.idb.errors import ValidationError

__all__ = ["StagedInputs"]


class StagedInputs:
    """Inputs staged for the commands of one context, by digest."""

    def __init__(self) -> None:
        self._inputs: dict[str, Any] = {}

    def stage(self, digest: str, value: Any) -> None:
        """Stage ``value`` under ``digest`` (replacing one staged before)."""
        self._inputs[digest] = value

    def take(self, digest: str, field: str) -> Any:
        """Remove and return what is staged under ``digest``; ValidationError naming ``field``."""
        try:
            return self._inputs.pop(digest)
        except KeyError:
            raise ValidationError(
                f"{field}: no input with this digest was read in this context (read the"
                " file through the store's method for this command, which stages it)",
                field=field,
            ) from None

    def discard(self, digest: str) -> None:
        """Forget what is staged under ``digest``, if anything."""
        self._inputs.pop(digest, None)
