"""``hpcgym study``: see HELP.

TRANSITIONAL: the parser and handler still live in :mod:`hpcgym.studies.galleguillos2017`; they move here.
"""

from __future__ import annotations

from hpcgym.studies.galleguillos2017 import _configure as configure
from hpcgym.studies.galleguillos2017 import _study as run

HELP = "run a paper's study end to end: runs, figures, table, findings (galleguillos2017, galleguillos2019)"

__all__ = ["HELP", "configure", "run"]
