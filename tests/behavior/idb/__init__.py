"""Behavior cases of ``panelot.idb``, run on both cores."""
