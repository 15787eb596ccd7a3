"""Panelot Store: conversation storage for a Pyodide side-panel extension.

:class:`PanelotStore` opens the ``panelot_v1`` database (on the memory core here, on
real IndexedDB in the browser) and runs every command and query; every error derives
from :class:`PanelotError`. The layers below: :mod:`panelot.idb`, a Dexie-compatible
IndexedDB layer that knows nothing of conversations, and the domain's sections
(:mod:`panelot.tree`, :mod:`panelot.runs`, :mod:`panelot.attachments`, ...), whose
commands and queries :mod:`panelot.api` declares.
"""

from panelot.errors import (
    AlreadyResolvedError,
    AssetIntegrityError,
    BindingDriftError,
    ConflictError,
    ImportError_,
    MissingSnapshotError,
    ReadOnlyAssetError,
    SnapshotError,
    SnapshotIntegrityError,
    SnapshotTooLargeError,
    SnapshotVersionError,
    TransitionError,
    UnknownCommandError,
)
from panelot.idb.errors import (
    AbortError,
    BulkError,
    ConstraintError,
    DataCloneError,
    DataError,
    NotFoundError,
    PanelotError,
    PrematureCommitError,
    QuotaExceededError,
    ReadOnlyError,
    SchemaError,
    TransactionInactiveError,
    ValidationError,
    VersionError,
)
from panelot.store import PanelotStore

__version__ = "0.1.0"
"""The package's version."""

__all__ = [
    "AbortError",
    "AlreadyResolvedError",
    "AssetIntegrityError",
    "BindingDriftError",
    "BulkError",
    "ConflictError",
    "ConstraintError",
    "DataCloneError",
    "DataError",
    "ImportError_",
    "MissingSnapshotError",
    "NotFoundError",
    "PanelotError",
    "PanelotStore",
    "PrematureCommitError",
    "QuotaExceededError",
    "ReadOnlyAssetError",
    "ReadOnlyError",
    "SchemaError",
    "SnapshotError",
    "SnapshotIntegrityError",
    "SnapshotTooLargeError",
    "SnapshotVersionError",
    "TransactionInactiveError",
    "TransitionError",
    "UnknownCommandError",
    "ValidationError",
    "VersionError",
    "__version__",
]
