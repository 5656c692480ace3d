"""What the training scripts share to set up a run: common fields, environments, seeding.

Each algorithm keeps its own readable file (:mod:`~hpcgym.agents.train_maskable_ppo`,
:mod:`~hpcgym.agents.train_ppo`); this module holds what both need before they learn:

* :class:`TrainArgs`, the fields every script's ``Args`` dataclass starts with (the run,
  the environment, the PPO hyperparameters, validation and checkpoints), and
  :func:`env_kwargs` and :func:`ppo_kwargs`, the environment's and PPO's arguments of them;
* :func:`make_vec_env`, the training environments (``--vec``): the native vector
  environment (:class:`~hpcgym.agents.vec_env.NativeVecEnv`, every episode in one compiled
  call) when the configuration compiles, else ``DummyVecEnv`` for one and
  ``SubprocVecEnv`` (one worker process each) for ``n_envs > 1``; with several traces
  (``--traces``, :func:`trace_logs`) environment ``i`` plays trace ``i mod n``
  (:func:`make_multilog_vec_env`); :func:`make_env`, one environment of a split and a
  trace (validation, the metadata);
* :func:`require_training`, the ``rl`` extra checked before any work, and
  :func:`seed_everything`.

The run that ties them to the callbacks and the saved models is
:class:`hpcgym.agents.run.Run`; what a saved model carries is :mod:`hpcgym.agents.models`.

**Seeds.** Everything random is seeded from ``seed``: Python's ``random``, numpy's global
generator, torch (:func:`seed_everything`), the model (``seed=``: its action sampling and
weight initialisation), training environment ``i`` (its window sampling, through the
first ``reset(seed=seed + i)``, and its action space), and nothing else draws: the
validation windows are fixed and played deterministically. Torch uses ``torch_threads``
CPU threads (1 by default) so that a run gives the same model on any machine with the same
library versions.
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from hpcgym.common.errors import HpcGymError, InvalidConfigError

VEC_KINDS = ("auto", "native", "dummy", "subproc")
"""The values of ``--vec`` (:attr:`TrainArgs.vec`)."""
NATIVE_PER_TRACE = 4
"""``--vec auto`` with several traces stacks native vector environments from this many
environments per trace on (fewer: ``dummy``); measured in docs/AGENTS.md."""

BC_CANDIDATES = ("easy", "sjf", "saf-bf", "f1-bf", "f2-bf", "f4-bf", "wfp3-bf", "unicep-bf")
"""The presets ``--bc-policy best`` chooses among by default: EASY and the size-aware orders with
EASY backfilling that the shipped agents pick from (docs/AGENTS.md)."""


@dataclass(frozen=True)
class TrainArgs:
    """The fields every training script's ``Args`` starts with (each is a ``--flag``)."""

    # ---- the run
    seed: int = 1
    """seed of every random generator (Python, numpy, torch, the model, the environments)"""
    total_timesteps: int = 100_000
    """environment steps to train for, summed over the environments"""
    out: str | None = None
    """folder of the models, checkpoints and training.json; None: runs/ALGORITHM-seedSEED"""
    n_envs: int = 1
    """training environments (episodes played side by side)"""
    vec: Literal["auto", "native", "dummy", "subproc"] = "auto"
    """how they run: native (all in one compiled vector env), dummy (here, one after the other), subproc
    (one process each); auto: native if the configuration compiles, else dummy for 1, subproc for more"""
    torch_threads: int = 1
    """torch CPU threads"""
    tensorboard_log: str | None = None
    """write TensorBoard logs into this folder; None: no logs"""
    progress_bar: bool = True
    """show a progress bar of the timesteps"""
    verbose: int = 0
    """stable-baselines3 verbosity (0 quiet, 1 a table per rollout)"""
    # ---- the environment
    env_id: str = "hpcgym/Dispatch-v1"
    """registered environment id (hpcgym/DispatchBackfill-v1, hpcgym/DispatchPolicy-v1,
    hpcgym/DispatchLearnedBackfill-v1, ...)"""
    trace: str | None = None
    """SWF trace or job table (.csv, .csv.gz, .parquet); None: the bundled SDSC-SP2 slice"""
    traces: tuple[str, ...] = ()
    """several traces, one agent trained on all (instead of --trace): environment i plays windows of the
    train split of trace i mod n, each on its own machine; validation scores the mean over every trace"""
    machine: str | None = None
    """machine preset or TOML file, e.g. eurora; None: the trace's own machine"""
    procs: int | None = None
    """machine size in processors of an SWF trace; None: the trace's, as for simulate"""
    window_jobs: int = 256
    """jobs per training episode (a window of the train split)"""
    window_size: int = 64
    """K, the waiting jobs the agent sees and chooses among"""
    backfill: Literal["none", "easy"] | None = None
    """'easy': a chosen job that does not fit gets EASY's reservation; None: the env id's"""
    policies: tuple[str, ...] | None = None
    """policy mode (hpcgym/DispatchPolicy-v1): the dispatcher presets an action picks; None: the env's"""
    backfill_order: str | None = None
    """learned backfilling (hpcgym/DispatchLearnedBackfill-v1): the EASY-based preset whose order and
    reservation the agent backfills around (easy, f2-bf, saf-bf, sjf, ...); None: the env's (easy)"""
    reward: str = "bsld"
    """reward name (bsld, bsld-sparse, wait)"""
    observations: tuple[str, ...] | None = None
    """observation parts by name; None: the environment's"""
    predictor: str | None = None
    """runtime predictor the agent sees; None: walltime, the user estimate"""
    invalid_penalty: float = 0.0
    """subtracted from the reward of an invalid action"""
    # ---- PPO
    n_steps: int = 512
    """steps per environment per rollout"""
    batch_size: int = 256
    """minibatch size"""
    n_epochs: int = 4
    """epochs per rollout"""
    learning_rate: float = 3e-4
    """Adam learning rate"""
    gamma: float = 0.999
    """discount factor"""
    gae_lambda: float = 0.95
    """GAE lambda"""
    ent_coef: float = 0.01
    """entropy bonus"""
    net_arch: tuple[int, ...] = (128, 128)
    """hidden layer sizes of the policy and value networks"""
    # ---- behaviour cloning before PPO (hpcgym.agents.bc)
    bc_policy: str | None = None
    """clone this dispatcher preset's decisions into the policy before PPO ('best': the best of
    --bc-candidates on the validation windows); None: PPO starts from random weights"""
    bc_candidates: tuple[str, ...] = BC_CANDIDATES
    """the presets --bc-policy best picks among (policy mode: the environment's --policies)"""
    bc_steps: int = 50_000
    """demonstration steps (whole episodes of training windows, the expert acting)"""
    bc_epochs: int = 10
    """passes over the demonstrations"""
    bc_batch_size: int = 256
    """minibatch size of behaviour cloning"""
    bc_learning_rate: float = 1e-3
    """Adam learning rate of behaviour cloning"""
    # ---- validation and checkpoints
    eval_freq: int = 10_000
    """score the agent on the validation windows every this many timesteps, and at the end (0: at the end)"""
    eval_windows: int = 5
    """validation windows (non-overlapping, evenly spaced in the validation split)"""
    eval_window_jobs: int | None = None
    """jobs per validation window; None: window_jobs"""
    checkpoint_freq: int = 0
    """save a checkpoint every this many timesteps (0: none)"""

    def __post_init__(self) -> None:
        for name, minimum in (
            ("seed", 0),
            ("total_timesteps", 1),
            ("n_envs", 1),
            ("torch_threads", 1),
            ("window_jobs", 1),
            ("window_size", 1),
            ("n_steps", 1),
            ("batch_size", 1),
            ("n_epochs", 1),
            ("eval_freq", 0),
            ("eval_windows", 1),
            ("checkpoint_freq", 0),
            ("bc_steps", 1),
            ("bc_epochs", 1),
            ("bc_batch_size", 1),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                flag = "--" + name.replace("_", "-")
                raise InvalidConfigError(f"{flag}: must be an integer >= {minimum}, got {value!r}")
        if self.eval_window_jobs is not None and self.eval_window_jobs < 1:
            raise InvalidConfigError(f"--eval-window-jobs: must be >= 1, got {self.eval_window_jobs}")
        if not self.net_arch or any(n < 1 for n in self.net_arch):
            raise InvalidConfigError(f"--net-arch: must be one or more positive sizes, got {self.net_arch}")
        for name in ("learning_rate", "gamma", "gae_lambda", "bc_learning_rate"):
            value = getattr(self, name)
            if not 0 < value <= 1:
                raise InvalidConfigError(f"--{name.replace('_', '-')}: must be in (0, 1], got {value}")
        if self.ent_coef < 0:
            raise InvalidConfigError(f"--ent-coef: must be >= 0, got {self.ent_coef}")
        if self.vec not in VEC_KINDS:
            raise InvalidConfigError(f"--vec: must be one of {', '.join(VEC_KINDS)}, got {self.vec!r}")
        self._check_traces()
        self._check_env_id_and_policies()
        self._check_bc()
        from hpcgym.env import make_config

        make_config(**env_kwargs(self))  # every environment argument checked before any work

    def _check_traces(self) -> None:
        """``--traces``: not with ``--trace``, no trace twice, one environment per trace at least,
        and each trace on its own machine (no ``--machine``, ``--procs``)."""
        if isinstance(self.traces, str):
            raise InvalidConfigError(f"--traces: must be a list of traces, got the string {self.traces!r}")
        if not self.traces:
            return
        if self.trace is not None:
            raise InvalidConfigError(
                f"--trace and --traces: give one (--trace {self.trace} --traces ...); for several "
                "traces list them all after --traces"
            )
        dup = sorted({t for t in self.traces if self.traces.count(t) > 1})
        if dup:
            raise InvalidConfigError(f"--traces: {', '.join(dup)} given twice")
        n = len(self.traces)
        if n > 1 and self.n_envs < n:
            raise InvalidConfigError(
                f"--n-envs: {self.n_envs} training environment(s) for {n} traces (--traces): give "
                f"--n-envs {n} or more (environment i plays trace i mod {n})"
            )
        for flag, value in (("--machine", self.machine), ("--procs", self.procs)):
            if n > 1 and value is not None:
                raise InvalidConfigError(
                    f"{flag}: with several traces (--traces) each runs on its own machine; "
                    f"{flag} {value} would set one for all"
                )

    def _check_env_id_and_policies(self) -> None:
        """``--env-id`` is registered; ``--policies`` names dispatcher presets of a policy-mode id,
        ``--backfill-order`` an EASY-based preset of a backfill-mode id."""
        import gymnasium as gym

        from hpcgym.baselines import resolve_policy_name

        module, _, env_id = self.env_id.rpartition(":")
        try:
            if module:
                importlib.import_module(module)
            spec = gym.spec(env_id)
        except (ImportError, gym.error.Error) as err:
            raise InvalidConfigError(f"--env-id: {err}") from err
        if self.backfill_order is not None:
            from hpcgym.env.backfill import base_preset

            if (spec.kwargs or {}).get("mode") != "backfill":
                raise InvalidConfigError(
                    f"--backfill-order: only learned-backfilling environments backfill around a preset's "
                    f"reservation; {self.env_id} is not one (use --env-id hpcgym/DispatchLearnedBackfill-v1)"
                )
            try:
                base_preset(self.backfill_order)
            except HpcGymError as err:
                raise InvalidConfigError(f"--backfill-order: {str(err).removeprefix('order: ')}") from err
        if self.policies is None:
            return
        if (spec.kwargs or {}).get("mode") != "policy":
            raise InvalidConfigError(
                f"--policies: only policy-mode environments pick among dispatchers; {self.env_id} is "
                "not one (use --env-id hpcgym/DispatchPolicy-v1)"
            )
        for name in self.policies:
            try:
                resolve_policy_name(name)
            except HpcGymError as err:
                raise InvalidConfigError(f"--policies: {err}") from err

    def _check_bc(self) -> None:
        """``--bc-policy`` and ``--bc-candidates`` name dispatcher presets (or ``best``)."""
        from hpcgym.baselines import resolve_policy_name

        names = [*self.bc_candidates] + ([self.bc_policy] if self.bc_policy not in (None, "best") else [])
        for name in names:
            flag = "--bc-policy" if name == self.bc_policy else "--bc-candidates"
            try:
                resolve_policy_name(name)
            except HpcGymError as err:
                raise InvalidConfigError(f"{flag}: {err}") from err
        if self.bc_policy is not None and self.policies is not None and self.bc_policy != "best":
            listed = [resolve_policy_name(p) for p in self.policies]
            if resolve_policy_name(self.bc_policy) not in listed:
                raise InvalidConfigError(
                    f"--bc-policy: in policy mode the expert picks one of --policies ({', '.join(listed)}); "
                    f"{self.bc_policy!r} is not one of them"
                )


def trace_logs(args: TrainArgs) -> tuple[str | None, ...]:
    """The traces a run trains on: ``--traces``, else ``(--trace,)`` (None: the bundled slice)."""
    return tuple(args.traces) if args.traces else (args.trace,)


def env_kwargs(args: TrainArgs, log: int = 0) -> dict[str, Any]:
    """The environment arguments of ``args`` on its ``log``-th trace (:func:`trace_logs`;
    ``backfill``, ``policies`` and ``order`` only when given)."""
    kw: dict[str, Any] = {
        "trace": trace_logs(args)[log],
        "machine": args.machine,
        "procs": args.procs,
        "window_jobs": args.window_jobs,
        "window_size": args.window_size,
        "reward": args.reward,
        "observations": args.observations,
        "predictor": args.predictor,
        "invalid_penalty": args.invalid_penalty,
    }
    if args.backfill is not None:
        kw["backfill"] = args.backfill
    if args.policies is not None:
        kw["policies"] = args.policies
    if args.backfill_order is not None:
        kw["order"] = args.backfill_order
    return kw


def ppo_kwargs(args: TrainArgs) -> dict[str, Any]:
    """The keyword arguments PPO and MaskablePPO share."""
    return {
        "n_steps": args.n_steps,
        "batch_size": args.batch_size,
        "n_epochs": args.n_epochs,
        "learning_rate": args.learning_rate,
        "gamma": args.gamma,
        "gae_lambda": args.gae_lambda,
        "ent_coef": args.ent_coef,
        "policy_kwargs": {"net_arch": list(args.net_arch)},
        "tensorboard_log": args.tensorboard_log,
        "seed": args.seed,
        "verbose": args.verbose,
        "device": "cpu",
    }


def _module_id(env_id: str) -> str:
    """``env_id`` with Gymnasium's module prefix, so worker processes register the ids."""
    return env_id if ":" in env_id else f"hpcgym:{env_id}"


def make_env(args: TrainArgs, split: str, log: int = 0, **overrides: Any) -> Any:
    """One flattened environment of ``split`` of the ``log``-th trace (for validation and the metadata)."""
    import gymnasium as gym

    from hpcgym.env import FlattenDispatchObservation

    return FlattenDispatchObservation(
        gym.make(_module_id(args.env_id), **{**env_kwargs(args, log), "split": split, **overrides})
    )


def vec_kind(args: TrainArgs) -> str:
    """``native``, ``dummy`` or ``subproc``: what ``--vec`` (``auto`` resolved) gives for ``args``.

    ``auto`` takes the native vector environment when its compiled kernel runs the
    configuration (:func:`hpcgym.env.vector.compiled_obstacle`): every episode is then the
    one a single environment gives, several times faster (docs/BENCHMARKS.md). With
    several traces (one native environment per trace, stacked) it does so only from
    :data:`NATIVE_PER_TRACE` environments per trace: below, each compiled call steps too
    few episodes to pay for itself, and ``dummy`` is as fast or faster (docs/AGENTS.md,
    "Several logs").
    """
    if args.vec != "auto":
        return args.vec
    from hpcgym.agents.vec_env import native_available

    n_logs = len(trace_logs(args))
    if all(
        native_available(_module_id(args.env_id), {**env_kwargs(args, log), "split": "train"})
        for log in range(n_logs)
    ):
        if n_logs > 1 and args.n_envs < NATIVE_PER_TRACE * n_logs:
            return "dummy"
        return "native"
    return "subproc" if args.n_envs > 1 else "dummy"


def make_vec_env(args: TrainArgs) -> Any:
    """The ``n_envs`` training environments of the train split, flattened, seeded from ``args.seed``.

    ``--vec native``: one :class:`~hpcgym.agents.vec_env.NativeVecEnv` in this process;
    ``dummy``: the environments in this process (``DummyVecEnv``); ``subproc``: one
    worker process each (``SubprocVecEnv``), built by stable-baselines3's ``make_vec_env``
    (each wrapped in its ``Monitor``, so episode returns reach the logs; the native one
    reports them the same way). Environment ``i`` is seeded with ``seed + i``.

    With several traces (``--traces``, n of them) environment ``i`` plays trace ``i mod n``
    (:func:`make_multilog_vec_env`).
    """
    kind = vec_kind(args)
    if len(trace_logs(args)) > 1:
        return make_multilog_vec_env(args, kind)
    kwargs = {**env_kwargs(args), "split": "train"}
    if kind == "native":
        from hpcgym.agents.vec_env import NativeVecEnv

        venv = NativeVecEnv(_module_id(args.env_id), args.n_envs, kwargs)
        venv.seed(args.seed)
        return venv
    from stable_baselines3.common.env_util import make_vec_env as sb3_make_vec_env
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    from hpcgym.env import FlattenDispatchObservation

    return sb3_make_vec_env(
        _module_id(args.env_id),
        n_envs=args.n_envs,
        seed=args.seed,
        env_kwargs=kwargs,
        wrapper_class=FlattenDispatchObservation,
        vec_env_cls=SubprocVecEnv if kind == "subproc" else DummyVecEnv,
    )


def make_multilog_vec_env(args: TrainArgs, kind: str) -> Any:
    """The training environments of several traces: environment ``i`` on trace ``i mod n``.

    Each trace keeps its own machine (its size, as ``--trace`` alone would give it) and
    its own train split; environment ``i`` is seeded with ``seed + i`` as with one trace.
    ``native``: one :class:`~hpcgym.agents.vec_env.NativeVecEnv` per trace (a native
    vector environment steps episodes of one configuration, so of one trace), stacked
    behind one ``VecEnv`` (:class:`~hpcgym.agents.vec_env.StackedVecEnv`) in the order
    above; ``dummy`` / ``subproc``: one ``DummyVecEnv`` / ``SubprocVecEnv`` of
    ``Monitor``-wrapped environments, as stable-baselines3's ``make_vec_env`` builds them
    (each action space seeded with ``seed + i``).
    """
    n_logs = len(trace_logs(args))
    env_id = _module_id(args.env_id)
    which = [i % n_logs for i in range(args.n_envs)]
    if kind == "native":
        from hpcgym.agents.vec_env import NativeVecEnv, StackedVecEnv

        parts = [
            NativeVecEnv(env_id, which.count(log), {**env_kwargs(args, log), "split": "train"})
            for log in range(n_logs)
        ]
        venv = StackedVecEnv(parts, which)
        venv.seed(args.seed)
        return venv
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    fns = [
        _monitored_env(env_id, {**env_kwargs(args, log), "split": "train"}, args.seed + i)
        for i, log in enumerate(which)
    ]
    venv = SubprocVecEnv(fns) if kind == "subproc" else DummyVecEnv(fns)
    venv.seed(args.seed)
    return venv


def _monitored_env(env_id: str, kwargs: dict[str, Any], seed: int) -> Callable[[], Any]:
    """A function making one flattened, ``Monitor``-wrapped environment (its action space seeded)."""

    def make() -> Any:
        import gymnasium as gym
        from stable_baselines3.common.monitor import Monitor

        from hpcgym.env import FlattenDispatchObservation

        env = gym.make(env_id, **kwargs)
        env.action_space.seed(seed)
        return FlattenDispatchObservation(Monitor(env))

    return make


def require_training(args: TrainArgs, what: str) -> None:
    """Raise :class:`~hpcgym.common.errors.MissingExtraError` unless the ``rl`` extra (and
    tensorboard, for ``--tensorboard-log``) is installed: before any work."""
    from hpcgym.common.extras import require

    require("rl", what=what)
    if args.tensorboard_log is not None:
        require("rl", "tensorboard", what="--tensorboard-log")


def seed_everything(seed: int, torch_threads: int) -> None:
    """Seed Python's ``random``, numpy's global generator and torch; set torch's CPU threads."""
    import torch

    random.seed(seed)
    np.random.seed(seed)  # noqa: NPY002 - libraries that still read the global generator
    torch.manual_seed(seed)
    torch.set_num_threads(max(1, torch_threads))
