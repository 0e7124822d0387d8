"""pyACL-style API over evrt (placeholder, filled in next)."""
