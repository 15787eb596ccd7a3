"""Behavior cases of ``panelot.legacy``, run on both cores."""
