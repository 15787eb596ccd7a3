"""Behavior cases of ``panelot.attachments``, run on both cores."""
