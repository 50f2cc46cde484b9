"""optrank.estimators."""
