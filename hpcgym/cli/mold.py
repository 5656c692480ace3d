"""``hpcgym mold``: see HELP.

TRANSITIONAL: the parser and handler still live in :mod:`hpcgym.baselines.molding`; they move here.
"""

from __future__ import annotations

from hpcgym.baselines.molding import _configure as configure
from hpcgym.baselines.molding import _mold as run

HELP = "job molding and delayed submission in front of EASY (003 Tables VIII, IX)"

__all__ = ["HELP", "configure", "run"]
