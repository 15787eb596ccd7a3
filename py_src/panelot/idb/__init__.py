"""A Dexie-compatible IndexedDB layer for Python, with a memory core and a browser core.

It knows nothing of conversations. See :mod:`panelot.idb.database` for the transaction
rules and :mod:`panelot.idb.core` for the protocol both cores implement.
"""

from panelot.idb.collection import Collection
from panelot.idb.core import Core, CoreFactory
from panelot.idb.database import Database, Transaction
from panelot.idb.errors import (
    AbortError,
    BulkError,
    ConstraintError,
    DatabaseClosedError,
    DataCloneError,
    DataError,
    InvalidStateError,
    InvalidTableError,
    NotFoundError,
    PanelotError,
    PrematureCommitError,
    QuotaExceededError,
    ReadOnlyError,
    SchemaError,
    TransactionInactiveError,
    UnknownError,
    UpgradeError,
    ValidationError,
    VersionError,
)
from panelot.idb.keys import MAX_KEY, MIN_KEY, KeyRange, compare_keys, validate_key
from panelot.idb.memory.core import MemoryFactory
from panelot.idb.schema import IndexSpec, SchemaVersion, TableSpec, native_version, parse_stores
from panelot.idb.table import Table, WhereClause
from panelot.idb.upgrade import SchemaDiff, SchemaDiffWarning

__all__ = [
    "MAX_KEY",
    "MIN_KEY",
    "AbortError",
    "BulkError",
    "Collection",
    "ConstraintError",
    "Core",
    "CoreFactory",
    "DataCloneError",
    "DataError",
    "Database",
    "DatabaseClosedError",
    "IndexSpec",
    "InvalidStateError",
    "InvalidTableError",
    "KeyRange",
    "MemoryFactory",
    "NotFoundError",
    "PanelotError",
    "PrematureCommitError",
    "QuotaExceededError",
    "ReadOnlyError",
    "SchemaDiff",
    "SchemaDiffWarning",
    "SchemaError",
    "SchemaVersion",
    "Table",
    "TableSpec",
    "Transaction",
    "TransactionInactiveError",
    "UnknownError",
    "UpgradeError",
    "ValidationError",
    "VersionError",
    "WhereClause",
    "compare_keys",
    "native_version",
    "parse_stores",
    "validate_key",
]
