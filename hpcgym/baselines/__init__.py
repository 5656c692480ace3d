"""Reference dispatchers and the named presets the CLI and the environment use.

The presets are a table (:mod:`hpcgym.baselines.presets`); a name becomes a dispatcher
with :func:`make_policy`, and :func:`run_policy` runs it on a workload:

>>> from hpcgym.baselines import make_policy, policy_specs
>>> make_policy("easy").name
'easy'
>>> policy_specs()["easy"].predictor
'walltime'
"""

from __future__ import annotations

from hpcgym.baselines.cp import ConstraintProgramming
from hpcgym.baselines.cp_hints import best_hint, greedy_schedule, hint_orders, objective_value
from hpcgym.baselines.cp_problem import Problem, VerificationError, verify_solution
from hpcgym.baselines.dispatchers import (
    EXTRA_RULES,
    FCFS,
    EasyBackfilling,
    ListScheduler,
    PriorityRuleBased,
    parse_ewt,
)
from hpcgym.baselines.heuristics import SCORES, QueueOrder, heuristic_score
from hpcgym.baselines.molding import run_managed, step_engine
from hpcgym.baselines.molding_choice import (
    UserHistory,
    amdahl_factor,
    choose_size,
    gain_score,
    molded_estimate,
    roulette,
    settle_time,
)
from hpcgym.baselines.molding_config import MODES, RUNTIME_MODELS, WAIT_PREDICTORS, MoldingConfig
from hpcgym.baselines.molding_result import PAPER, MoldingResult, over_seeds
from hpcgym.baselines.presets import (
    ALIASES,
    POLICIES,
    PRESETS,
    PolicySpec,
    make_policy,
    policy_parameters,
    policy_spec,
    policy_specs,
    preset_predictor,
    register_policy,
    resolve_policy_name,
)
from hpcgym.baselines.replay import Replay
from hpcgym.baselines.rlscheduler import RLSchedulerOrder, rlscheduler_score
from hpcgym.baselines.run import SUMMARY_COLUMNS, RunVia, easy_extra, format_table, run_policy, with_extra

__all__ = [
    "ALIASES",
    "EXTRA_RULES",
    "FCFS",
    "MODES",
    "PAPER",
    "POLICIES",
    "PRESETS",
    "RUNTIME_MODELS",
    "SCORES",
    "SUMMARY_COLUMNS",
    "WAIT_PREDICTORS",
    "ConstraintProgramming",
    "EasyBackfilling",
    "ListScheduler",
    "MoldingConfig",
    "MoldingResult",
    "PolicySpec",
    "PriorityRuleBased",
    "Problem",
    "QueueOrder",
    "RLSchedulerOrder",
    "Replay",
    "RunVia",
    "UserHistory",
    "VerificationError",
    "amdahl_factor",
    "best_hint",
    "choose_size",
    "easy_extra",
    "format_table",
    "gain_score",
    "greedy_schedule",
    "heuristic_score",
    "hint_orders",
    "make_policy",
    "molded_estimate",
    "objective_value",
    "over_seeds",
    "parse_ewt",
    "policy_parameters",
    "policy_spec",
    "policy_specs",
    "preset_predictor",
    "register_policy",
    "resolve_policy_name",
    "rlscheduler_score",
    "roulette",
    "run_managed",
    "run_policy",
    "settle_time",
    "step_engine",
    "verify_solution",
    "with_extra",
]
