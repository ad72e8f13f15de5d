"""Storage: interfaces (the contract) and the backends that implement them."""
