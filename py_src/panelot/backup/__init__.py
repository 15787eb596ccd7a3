"""Whole-database backup and restore: every table, Blobs included, and the settings.

The file is ``dexie-export-import``'s format (:mod:`panelot.idb.transfer`), so Dexie's
addon reads it and its files restore here; settings ride in a section of their own
(:mod:`panelot.backup.section`), credential values never. A restore reads and checks
the whole file first (:mod:`panelot.backup.files`, :mod:`panelot.backup.checks`), then
replaces every table in one transaction: a crash leaves the old data or the new.
"""
