"""Behavior cases of ``panelot.tree``, run on both cores."""
