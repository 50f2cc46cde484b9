"""optrank.online."""
