"""lifecycle."""
