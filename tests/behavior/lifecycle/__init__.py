"""Behavior cases of ``panelot.lifecycle``, run on both cores."""
