"""Behavior cases of ``panelot.runs``, run on both cores."""
