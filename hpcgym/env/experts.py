"""Experts: the action a reference dispatcher takes in an environment's current state.

Behaviour cloning (:mod:`hpcgym.agents.bc`) learns a policy network from these actions; any
code can use them to play an environment as a heuristic would. :class:`Expert` answers for
every action mode:

* ``policy`` mode: the index of the dispatcher among the environment's ``policies`` (the
  expert always picks it, which schedules exactly as that dispatcher does).
* ``job`` mode (with or without ``backfill="easy"``): the window slot of the next job the
  dispatcher starts at this decision point, then "advance" when it starts no more
  (:class:`~hpcgym.env.DispatcherPolicy`). Every job the expert picks fits, so the
  environment never reserves for it; the dispatcher plans with the environment's predictor.
  With every waiting job shown this is the dispatcher's own schedule
  (``tests/env/test_experts.py``). With K shown jobs a dispatcher may choose a job beyond
  them: the expert then picks the first of its chosen jobs that is shown, else advances
  (or, when nothing is left to happen, starts the oldest fitting job, the environment's
  fallback), and counts the decision in :attr:`Expert.off_window`.
* ``backfill`` mode (learned backfilling): only the environment's base preset (its
  ``order``) has an expert there, :func:`hpcgym.env.backfill.expert_action` (the first job
  that may backfill, else stop), which gives exactly the preset's schedule.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hpcgym.baselines import make_policy, resolve_policy_name
from hpcgym.common.errors import InvalidConfigError
from hpcgym.env.adapters import DispatcherPolicy
from hpcgym.env.backfill import expert_action
from hpcgym.env.dispatch import DispatchEnv


class Expert:
    """The actions of the dispatcher preset ``policy`` in ``env`` (any wrapper of a :class:`DispatchEnv`).

    Call it after each ``reset``/``step`` for the action the dispatcher takes now.

    Args:
        env: the environment the expert acts in.
        policy: a dispatcher preset name (``hpcgym policies``); in ``policy`` mode, one of
            the environment's ``policies``.

    Raises:
        UnknownNameError: no such preset.
        InvalidConfigError: in ``policy`` mode, a preset that is not among the environment's.
    """

    def __init__(self, env: Any, policy: str) -> None:
        unwrapped = env.unwrapped
        if not isinstance(unwrapped, DispatchEnv):
            raise InvalidConfigError("env: an expert acts in a DispatchEnv (or a wrapper of one)")
        self.env = unwrapped
        self.name = resolve_policy_name(policy)
        self.off_window = 0
        """Decisions at which the dispatcher chose only jobs beyond the K shown."""
        self._index: int | None = None
        self._job: DispatcherPolicy | None = None
        mode = unwrapped.mode
        if mode == "policy":
            names = [resolve_policy_name(p) for p in unwrapped.config.action.policies]
            if self.name not in names:
                raise InvalidConfigError(
                    f"policy: {policy!r} is not one of the environment's policies ({', '.join(names)})"
                )
            self._index = names.index(self.name)
        elif mode == "job":
            self._job = DispatcherPolicy(make_policy(self.name), unwrapped)
        elif mode == "backfill":
            order = unwrapped.config.action.order
            if self.name != order:
                raise InvalidConfigError(
                    f"policy: in backfill mode the expert is the environment's order ({order!r}), "
                    f"not {policy!r}"
                )
        else:  # pragma: no cover - a mode added without its expert
            raise InvalidConfigError(f"env: no expert for mode {mode!r}")

    def __call__(self) -> int:
        """The action the dispatcher takes in the environment's current state."""
        if self._index is not None:
            return self._index
        if self.env.mode == "backfill":
            return expert_action(self.env)
        job = self._job
        assert job is not None
        try:
            return int(job.predict(None)[0])
        except InvalidConfigError:  # its next job is beyond the K shown
            return self._off_window(job)

    def _off_window(self, job: DispatcherPolicy) -> int:
        env = self.env
        self.off_window += 1
        slot = job.next_shown()
        if slot is not None:
            return slot
        mask = env.action_masks()
        if mask[env.window_size]:
            return env.window_size
        return int(np.flatnonzero(mask)[0])
