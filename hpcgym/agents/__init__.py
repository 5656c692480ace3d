"""Training and evaluation scripts for learned dispatchers (need the ``rl`` extra)."""
