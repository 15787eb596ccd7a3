"""Full-text search over every conversation: titles, tags and message text, ranked, live.

The pure engine, no I/O: :mod:`.text` folds text and cuts it into terms (words; CJK as
character bigrams) and parses a query; :mod:`.rank` scores documents with BM25 over an
inverted index (prefix expansion of the word being typed, phrases checked by position);
:mod:`.snippet` cuts the text shown around the best match, with highlights; :mod:`.inverted`
is an in-memory inverted index over them; :mod:`.marks` holds the Unicode combining-mark
ranges the tokenizer keeps inside words.

The index lives in ``panelot_search_v1`` (:mod:`.schema`), derived from ``panelot_v1``
and never backed up; :mod:`.indexer` keeps it true from ``panelot_v1``'s change feed,
after each commit and off the write path; :mod:`.query` answers ``search.messages``
and checks every hit against ``panelot_v1`` before it is returned. See docs/search.md.
"""
