"""Attachments: Blob records, the storage budget and its eviction, quota, tool details.

:mod:`.records` holds the ``attachments`` table (``put_attachment``, ``attach``,
``read_bytes``, ``list_attachments``); :mod:`.budget` writes one within the budget
(``put_within_budget``), evicting first with :mod:`.eviction`'s two steps (mark, then
delete; ``evict``, ``finish_interrupted``); :mod:`.quota` reports the browser's storage
estimate; :mod:`.tool_details` moves large UI details of tool results into attachments.
Their commands and queries are in :mod:`panelot.api.attachments`.
"""
