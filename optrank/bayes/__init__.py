"""optrank.bayes."""
