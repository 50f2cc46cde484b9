"""optrank.features."""
