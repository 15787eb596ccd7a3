"""A Dexie-compatible IndexedDB layer for Python, with a memory core and a browser core.

It knows nothing of conversations. See :mod:`panelot.idb.database` for the transaction
rules and :mod:`panelot.idb.core` for the protocol both cores implement.
"""

from panelot.idb.collection import Collection
from panelot.idb.core import (
    Batch,
    Core,
    CoreFactory,
    Count,
    Durability,
    GetMany,
    Mutate,
    MutateResult,
    Query,
    Request,
)
from panelot.idb.database import Database, Transaction
from panelot.idb.errors import (
    AbortError,
    ArgumentTypeError,
    BulkError,
    ConstraintError,
    DatabaseClosedError,
    DataCloneError,
    DataError,
    InvalidArgumentError,
    InvalidStateError,
    InvalidTableError,
    ModifyError,
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
from panelot.idb.modify import ModifyContext, PropModification, add, remove, replace_prefix
from panelot.idb.schema import IndexSpec, SchemaVersion, TableSpec, native_version, parse_stores
from panelot.idb.sorting import MISSING
from panelot.idb.table import Table
from panelot.idb.upgrade import SchemaDiff, SchemaDiffWarning
from panelot.idb.where import WhereClause

__all__ = [
    "MAX_KEY",
    "MIN_KEY",
    "MISSING",
    "Batch",
    "Count",
    "GetMany",
    "Mutate",
    "MutateResult",
    "Query",
    "Request",
    "AbortError",
    "ArgumentTypeError",
    "BulkError",
    "Collection",
    "ConstraintError",
    "Core",
    "CoreFactory",
    "DataCloneError",
    "DataError",
    "Database",
    "DatabaseClosedError",
    "Durability",
    "IndexSpec",
    "InvalidArgumentError",
    "InvalidStateError",
    "InvalidTableError",
    "KeyRange",
    "MemoryFactory",
    "ModifyContext",
    "ModifyError",
    "NotFoundError",
    "PanelotError",
    "PrematureCommitError",
    "PropModification",
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
    "add",
    "compare_keys",
    "native_version",
    "parse_stores",
    "remove",
    "replace_prefix",
    "validate_key",
]
