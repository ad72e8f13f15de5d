"""privacy: erasing every trace of a user (EraseUser)."""
