"""Adapters to external services (model endpoints), behind domain protocols."""
