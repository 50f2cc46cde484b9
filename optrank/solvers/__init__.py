"""optrank.solvers."""
