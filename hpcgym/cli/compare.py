"""``hpcgym compare``: see HELP.

TRANSITIONAL: the parser and handler still live in :mod:`hpcgym.experiments.compare`; they move here.
"""

from __future__ import annotations

from hpcgym.experiments.compare import _configure as configure
from hpcgym.experiments.compare import _run as run

HELP = "several policies and predictors on one trace: table, CSV/JSON and a plot"

__all__ = ["HELP", "configure", "run"]
