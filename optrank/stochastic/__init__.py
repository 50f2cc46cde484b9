"""optrank.stochastic."""
