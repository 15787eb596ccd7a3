"""The store's commands and queries, one module per section, merged by :mod:`.registry`."""
