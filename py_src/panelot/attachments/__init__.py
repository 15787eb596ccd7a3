"""attachments."""
