"""Behavior cases of ``panelot.library``, run on both cores."""
