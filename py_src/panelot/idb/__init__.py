"""A Dexie-compatible IndexedDB layer for Python, with a memory core and a browser core.

It knows nothing of conversations. See :mod:`panelot.idb.database` for the transaction
rules and :mod:`panelot.idb.core` for the protocol both cores implement.
"""

from .collection import Collection
from .core import Core, CoreFactory
from .database import Database, Transaction
from .errors import (
    AbortError,
    BulkError,
    ConstraintError,
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
    ValidationError,
    VersionError,
)
from .keys import MAX_KEY, MIN_KEY, KeyRange, compare_keys, validate_key
from .memory import MemoryFactory
from .schema import IndexSpec, SchemaVersion, TableSpec, native_version, parse_stores
from .table import Table, WhereClause

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
    "SchemaError",
    "SchemaVersion",
    "Table",
    "TableSpec",
    "Transaction",
    "TransactionInactiveError",
    "UnknownError",
    "ValidationError",
    "VersionError",
    "WhereClause",
    "compare_keys",
    "native_version",
    "parse_stores",
    "validate_key",
]
