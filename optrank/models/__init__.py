"""optrank.models."""
