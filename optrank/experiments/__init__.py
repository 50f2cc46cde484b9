"""optrank.experiments."""
