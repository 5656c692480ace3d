"""``hpcgym train``: see HELP.

TRANSITIONAL: the parser and handler still live in :mod:`hpcgym.agents.train`; they move here.
"""

from __future__ import annotations

from hpcgym.agents.train import _configure as configure
from hpcgym.agents.train import _run as run

HELP = "train an agent (MaskablePPO or PPO) on the train split, keep the best on the validation split"

__all__ = ["HELP", "configure", "run"]
