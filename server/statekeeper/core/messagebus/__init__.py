"""messagebus."""
