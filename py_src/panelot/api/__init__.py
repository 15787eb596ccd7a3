"""The store's commands and queries: one module per section, merged by :mod:`.registry`.

Each section's API module (``threads``, ``messages``, ``send``, ``runs``, ``attachments``,
``library``, ``settings``, ``legacy``, ``requests``, ``backup``) declares its bus
:class:`~panelot.bus.Handler` objects in ``COMMANDS`` and its read
:class:`~panelot.bus.Query` objects in ``QUERIES``, decoding the wire arguments and
calling the section's functions. None imports another; :mod:`.registry` is the only
module naming them all, and its ``COMMANDS`` and ``QUERIES`` are what
:class:`panelot.store.PanelotStore` runs.
"""
