"""Experiments: evaluation protocols, evaluate, comparisons and sweeps (simulation and training)."""
