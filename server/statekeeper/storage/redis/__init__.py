"""redis."""
