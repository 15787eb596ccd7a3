"""Whole-database export and import in ``dexie-export-import``'s file format.

:func:`export_db` writes any database as the addon's JSON (Typeson for Blobs, binary,
dates and non-finite numbers), streamed into a Blob of parts; :func:`import_db` reads
such a file as a stream, checks all of it, then writes it in one transaction. Files made
here import with the addon into Dexie, and the addon's files import here.
"""

from panelot.idb.transfer.export import ExportOptions, ExportProgress, export_db, schema_string
from panelot.idb.transfer.importing import (
    ImportOptions,
    ImportPlan,
    ImportProgress,
    ImportResult,
    import_db,
    import_tables,
    read_import,
    write_import,
)
from panelot.idb.transfer.reader import ByteSource, BytesSource, Header, TableInfo, read_header
from panelot.idb.transfer.sinks import blob_source

__all__ = [
    "ByteSource",
    "BytesSource",
    "ExportOptions",
    "ExportProgress",
    "Header",
    "ImportOptions",
    "ImportPlan",
    "ImportProgress",
    "ImportResult",
    "TableInfo",
    "blob_source",
    "export_db",
    "import_db",
    "import_tables",
    "read_header",
    "read_import",
    "schema_string",
    "write_import",
]
