"""Behavior cases of ``panelot.bus``, run on both cores."""
