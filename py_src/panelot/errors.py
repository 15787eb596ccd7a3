"""Domain errors, on the same base class as the storage layer's errors."""

from __future__ import annotations

from .idb.errors import PanelotError, ValidationError

__all__ = [
    "ConflictError",
    "ImportError_",
    "PanelotError",
    "UnknownCommandError",
    "ValidationError",
]


class ConflictError(PanelotError):
    """A submission id was reused for a different request (its fingerprint differs)."""

    name = "ConflictError"


class UnknownCommandError(PanelotError):
    """The command or query type is not known."""

    name = "UnknownCommandError"


class ImportError_(ValidationError):  # noqa: N801 - avoids shadowing the builtin ImportError
    """An import was refused by its pre-check; ``problems`` lists what is wrong."""

    name = "ImportError"

    def __init__(self, problems: list[str]) -> None:
        shown = "; ".join(problems[:20]) + (
            f"; and {len(problems) - 20} more" if len(problems) > 20 else ""
        )
        field = problems[0].split(":", 1)[0] if problems else None
        super().__init__(f"import refused: {shown}", field=field)
        self.problems = problems
