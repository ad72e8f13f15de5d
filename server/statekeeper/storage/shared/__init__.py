"""What the SQLite and PostgreSQL stores of each capability share: row mappers and rules
written once (the database-specific parts stay in storage/embedded and storage/postgres)."""
