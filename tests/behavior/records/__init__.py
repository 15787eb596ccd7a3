"""Behavior cases of the record types: one per table, read one way, one id rule."""
