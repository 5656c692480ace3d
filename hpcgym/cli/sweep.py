"""``hpcgym sweep``: see HELP.

TRANSITIONAL: the parser and handler still live in :mod:`hpcgym.experiments.sweep`; they move here.
"""

from __future__ import annotations

from hpcgym.experiments.sweep import _configure as configure
from hpcgym.experiments.sweep import _sweep as run

HELP = "run a grid or sample of simulations (dispatchers x predictors x traces x loads x seeds)"

__all__ = ["HELP", "configure", "run"]
