"""Full-text search over every conversation: titles, tags and message text, ranked.

The pure engine, no I/O: :mod:`.text` folds text and cuts it into terms (words; CJK as
character bigrams) and parses a query; :mod:`.rank` scores documents with BM25 over an
inverted index (prefix expansion of the word being typed, phrases checked by position);
:mod:`.snippet` cuts the text shown around the best match, with highlights; :mod:`.inverted`
is an in-memory inverted index over them. :mod:`.marks` holds the Unicode combining-mark
ranges the tokenizer keeps inside words. docs/search.md says why the engine is our own.
"""
