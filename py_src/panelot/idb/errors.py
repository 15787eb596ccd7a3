"""One base error for the whole store, with IndexedDB- and Dexie-named subclasses.

The names mirror IndexedDB's ``DOMException`` names and Dexie's own error names, so a
reader's IndexedDB knowledge transfers. A JS exception is mapped to one of these at the
browser boundary by :func:`error_from_name`.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AbortError",
    "BulkError",
    "ConstraintError",
    "DatabaseClosedError",
    "DataCloneError",
    "DataError",
    "InvalidStateError",
    "ArgumentTypeError",
    "InvalidArgumentError",
    "InvalidTableError",
    "MissingAPIError",
    "ModifyError",
    "NotFoundError",
    "PanelotError",
    "PrematureCommitError",
    "QuotaExceededError",
    "ReadOnlyError",
    "SchemaError",
    "TransactionInactiveError",
    "UnknownError",
    "UpgradeError",
    "ValidationError",
    "VersionError",
    "error_from_name",
]


class PanelotError(Exception):
    """Base class of every error the store raises on purpose.

    ``name`` is the IndexedDB/Dexie-style error name, ``field`` the offending field or
    key path when the error is about one input value.
    """

    name = "PanelotError"

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field

    def to_json(self) -> dict[str, Any]:
        """Return the error as the plain ``{name, message, field?}`` object the bridge sends."""
        out: dict[str, Any] = {"name": self.name, "message": self.message}
        if self.field is not None:
            out["field"] = self.field
        return out


class ConstraintError(PanelotError):
    """A unique index or primary key already holds the key (``add`` of an existing key)."""

    name = "ConstraintError"


class DataError(PanelotError):
    """A value is not a valid IndexedDB key, or a key range is malformed."""

    name = "DataError"


class NotFoundError(PanelotError):
    """A store, index or record that must exist does not."""

    name = "NotFoundError"


class TransactionInactiveError(PanelotError):
    """A request was made on a transaction that has already finished."""

    name = "TransactionInactiveError"


class ReadOnlyError(PanelotError):
    """A write was attempted in a read-only transaction."""

    name = "ReadOnlyError"


class QuotaExceededError(PanelotError):
    """The browser refused a write because the origin's storage quota is used up."""

    name = "QuotaExceededError"


class DataCloneError(PanelotError):
    """A value cannot be stored: it is not plain data (structured-clone failure)."""

    name = "DataCloneError"


class AbortError(PanelotError):
    """The transaction was aborted."""

    name = "AbortError"


class InvalidStateError(PanelotError):
    """The database or object is in a state that does not allow the call."""

    name = "InvalidStateError"


class MissingAPIError(PanelotError):
    """A browser API the store needs is missing in this context (Dexie's ``MissingAPIError``)."""

    name = "MissingAPIError"


class InvalidTableError(PanelotError):
    """A table name is not part of the transaction or of the schema."""

    name = "InvalidTableError"


class SchemaError(PanelotError):
    """A schema declaration is malformed, or the installed database contradicts it."""

    name = "SchemaError"


class UpgradeError(SchemaError):
    """An upgrade Dexie refuses too: a table's primary key changed (Dexie's ``UpgradeError``).

    ``field`` names the table. Raised before anything changes.
    """

    name = "UpgradeError"


class VersionError(PanelotError):
    """IndexedDB's ``VersionError``: an open request older than the installed version.

    Neither core raises it to a caller: as Dexie 4, they open a newer database at its
    installed version instead. Kept for mapping a native error by name.
    """

    name = "VersionError"


class DatabaseClosedError(InvalidStateError):
    """The connection is closed (Dexie's ``DatabaseClosedError``).

    When another context upgraded or deleted the database (``versionchange``), the
    :class:`~panelot.idb.database.Database` reopens it on its next transaction; this is
    raised only for a transaction that was already bound to the closed connection, or
    after an explicit ``close()``.
    """

    name = "DatabaseClosedError"


class PrematureCommitError(PanelotError):
    """A transaction body awaited something that is not an operation of that transaction.

    IndexedDB commits a transaction as soon as control returns to the event loop with
    no request pending, so such an await would commit half of the body. The store
    aborts the transaction instead and raises this error.
    """

    name = "PrematureCommitError"


class ValidationError(PanelotError):
    """Input failed validation; ``field`` names the offending field."""

    name = "ValidationError"


class UnknownError(PanelotError):
    """An error from the browser that has no more specific mapping."""

    name = "UnknownError"


class BulkError(PanelotError):
    """Some operations of a bulk call failed; ``failures`` maps each position to its error."""

    name = "BulkError"

    def __init__(self, message: str, failures: dict[int, PanelotError]) -> None:
        super().__init__(message)
        self.failures = failures

    def to_json(self) -> dict[str, Any]:
        """Return the error with its failures by position."""
        out = super().to_json()
        out["failures"] = {str(k): v.to_json() for k, v in sorted(self.failures.items())}
        return out


class InvalidArgumentError(PanelotError, ValueError):
    """An argument is of the right type but not usable (Dexie's ``InvalidArgumentError``)."""

    name = "InvalidArgumentError"


class ArgumentTypeError(PanelotError, TypeError):
    """An argument, or a value read, is of a type the call cannot take (Dexie's ``TypeError``)."""

    name = "TypeError"


class ModifyError(PanelotError):
    """``modify()`` failed for some records; nothing was written.

    As Dexie's: ``failures`` lists the errors, ``success_count`` how many records
    would have been written, ``failed_keys`` the primary keys that failed. Stricter
    than Dexie, which keeps the records that succeeded: the transaction is aborted.
    """

    name = "ModifyError"

    def __init__(
        self,
        message: str,
        failures: list[PanelotError],
        success_count: int,
        failed_keys: list[Any],
    ) -> None:
        super().__init__(message)
        self.failures = failures
        self.success_count = success_count
        self.failed_keys = failed_keys

    def to_json(self) -> dict[str, Any]:
        """Return the error with its failures, success count and failed keys."""
        out = super().to_json()
        out["failures"] = [f.to_json() for f in self.failures]
        out["successCount"] = self.success_count
        out["failedKeys"] = self.failed_keys
        return out


_BY_NAME: dict[str, type[PanelotError]] = {
    cls.name: cls
    for cls in (
        AbortError,
        ConstraintError,
        DataCloneError,
        DataError,
        DatabaseClosedError,
        InvalidArgumentError,
        InvalidStateError,
        MissingAPIError,
        NotFoundError,
        PrematureCommitError,
        QuotaExceededError,
        ReadOnlyError,
        SchemaError,
        TransactionInactiveError,
        UpgradeError,
        ValidationError,
        VersionError,
    )
}


def error_from_name(name: str, message: str) -> PanelotError:
    """Map a DOMException (or Dexie) error name and message to the project's error class."""
    cls = _BY_NAME.get(name, UnknownError)
    if cls is UnknownError:
        return UnknownError(f"{name}: {message}")
    return cls(message)
