"""gradview."""
