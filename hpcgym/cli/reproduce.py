"""``hpcgym reproduce``: see HELP.

TRANSITIONAL: the parser and handler still live in :mod:`hpcgym.studies.tsafrir2007`; they move here.
"""

from __future__ import annotations

from hpcgym.studies.tsafrir2007 import _configure as configure
from hpcgym.studies.tsafrir2007 import _reproduce as run

HELP = "recompute a paper's tables (tsafrir2007: Tables 2, 3 and 6 on one trace; hariharan: 003 Tables V-VII)"

__all__ = ["HELP", "configure", "run"]
