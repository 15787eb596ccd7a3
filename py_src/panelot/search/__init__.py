"""Full-text search over every conversation, in a database of its own.

The index lives in ``panelot_search_v1`` (:mod:`.schema`), derived from ``panelot_v1``
and never backed up; :mod:`.indexer` keeps it true from ``panelot_v1``'s change feed,
after each commit and off the write path; :mod:`.query` answers ``search.messages``
and checks every hit against ``panelot_v1`` before it is returned. See docs/search.md.
"""
