"""request."""
