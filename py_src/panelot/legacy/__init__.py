"""The previous extension's (``browsa``) ``chrome.storage.local`` layout and its import.

:mod:`.layout` reads the keys and migrates legacy sessions to the split layout;
:mod:`.convert` turns browsa history entries into node payloads; :mod:`.importer`
holds the ``legacy.import`` bus command.
"""
