"""Behavior cases of ``panelot.settings``, run on both cores."""
