"""``hpcgym evaluate``: see HELP.

TRANSITIONAL: the parser and handler still live in :mod:`hpcgym.experiments.evaluate`; they move here.
"""

from __future__ import annotations

from hpcgym.experiments.evaluate import _configure as configure
from hpcgym.experiments.evaluate import _run as run

HELP = (
    "dispatchers and agents on the same held-out, non-overlapping windows, with paired confidence intervals"
)

__all__ = ["HELP", "configure", "run"]
