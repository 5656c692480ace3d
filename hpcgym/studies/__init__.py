"""The papers' studies, one module each."""
