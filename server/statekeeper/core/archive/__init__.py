"""The archive tier: cold state moved to an object store and back on access."""
