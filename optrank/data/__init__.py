"""optrank.data."""
