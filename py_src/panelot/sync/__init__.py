"""Sync with the user's own CouchDB-compatible server (docs/sync.md), steps 1-3.

The section speaks CouchDB's replication protocol as a client, through the host's one
HTTP call (``Host.http``); nothing in the domain knows it exists.

* :mod:`.docid` — the document id of a record (``<table>:<key>``) and the synced tables;
* :mod:`.mapping` — a record as a document's body: local fields left out, binary data
  as the document's CouchDB attachment;
* :mod:`.revs` — deterministic revision ids (MD5 of RFC 8785 canonical JSON);
* :mod:`.clock` — the hybrid logical clock of the merge clocks;
* :mod:`.server` — the server's URL and database, checked, and the Basic auth header;
* :mod:`.couch` — the protocol's calls (``_revs_diff``, ``_bulk_docs``, ``_local``);
* :mod:`.state` — ``panelot_sync_v1``: device id, clock, configuration, what the server
  last had of each document, the push checkpoint (never in a backup);
* :mod:`.push` — one push: compare the synced tables with what the server last had and
  send what differs;
* :mod:`.fetch`, :mod:`.merge`, :mod:`.apply`, :mod:`.resolve`, :mod:`.pull` — one pull;
* :mod:`.outbox` — the outbox: what the change feed named since the last push;
* :mod:`.live` — :class:`~panelot.sync.live.Live`, the continuous loop (``sync.start``);
* :mod:`.section` — :class:`Syncer`, the store's sync section, and :func:`syncer_of`.
"""
