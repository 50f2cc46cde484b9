"""Reproduction protocols of the papers ' tables, one module per table family."""
