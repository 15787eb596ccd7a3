"""Behavior cases of ``panelot.request``, run on both cores."""
