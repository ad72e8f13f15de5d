"""The database side of the archive tier (core/archive), per backend."""
