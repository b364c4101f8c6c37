"""Internal implementation details."""
