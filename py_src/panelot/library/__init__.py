"""The library: skills, memories and plugins with their assets, each a checked repository.

:mod:`.skills` (``put_skill``, ``enabled_skills``, ...), :mod:`.memories`
(``memory_write``, ``memory_read``, ...), :mod:`.plugins` (``install_plugin``,
``uninstall_plugin``) and :mod:`.plugin_assets` (``put_asset``, ``read_asset``) each own
their tables and bounds; :mod:`.common` holds the checks they share (ids, JSON, text,
size limits). Their commands and queries are in :mod:`panelot.api.library`.
"""
