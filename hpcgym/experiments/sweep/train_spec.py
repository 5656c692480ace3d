"""Training sweeps of ``hpcgym sweep``: seeds and hyperparameters of ``hpcgym train`` as trials.

A spec file with a ``[train]`` table (or ``hpcgym sweep --train ALGORITHM``) describes
**trials** instead of simulations::

    name = "train-seeds"

    [train]
    algorithm = "maskable-ppo"       # hpcgym train ALGORITHM
    seeds = [1, 2, 3]                # one trial per seed and grid point

    [train.args]                     # fixed fields of the algorithm's Args (hpcgym train ... --help)
    total_timesteps = 20000
    window_jobs = 256

    [train.grid]                     # lists of values: their product (x seeds) are the trials
    learning_rate = [3e-4, 1e-4]

    [train.evaluate]                 # hpcgym evaluate on the test split
    baselines = ["easy", "easy++", "sjf"]
    windows = 10

A :class:`TrainSweepSpec` is checked when it is made (every trial's training arguments
included); :meth:`TrainSweepSpec.trials` lists its :class:`Trial` objects, each known by
its key (:meth:`Trial.key`) in the results table (:func:`columns`).

Choices where the issue leaves a detail open:

* ``seed`` and ``out`` are not training arguments of a sweep: the seeds are the
  ``seeds`` axis and every trial has its own run folder; the timesteps' progress bar
  is off unless ``progress_bar = true`` is given.
* A trial's key hashes the algorithm, every training argument (the trace by its file
  name, so a table stays valid when the traces move) and the evaluation's settings.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hpcgym.common.errors import InvalidConfigError, UnknownNameError
from hpcgym.common.registry import parse_value
from hpcgym.experiments.evaluate.results import SUMMARY_CSV

TRAIN_KEYS = {
    "algorithm": "the training script (hpcgym train ALGORITHM): maskable-ppo or ppo",
    "seeds": "training seeds; one trial per seed and grid point",
    "args": "a table of fixed training arguments (fields of the algorithm's Args)",
    "grid": "a table of training arguments with lists of values; their product is swept",
    "sample": "run a seeded random sample of this many trials instead of all",
    "sample_seed": "seed of that sample",
    "evaluate": "a table of evaluation settings: "
    + "; ".join(
        f"{k}: {v}"
        for k, v in {
            "baselines": "dispatchers evaluated beside each agent (default easy)",
            "window_jobs": "jobs per test window (default: the trial's window_jobs)",
            "windows": "test windows (default: as many as the test split holds)",
            "reference": "preset of the paired differences (default easy)",
            "seed": "bootstrap seed (default 0)",
            "n_resamples": "bootstrap resamples (default 9999)",
        }.items()
    ),
}
"""The keys of a spec's ``[train]`` table, with what each means."""

EVALUATE_KEYS = ("baselines", "window_jobs", "windows", "reference", "seed", "n_resamples")

SWEEP_OWNS = {
    "seed": "the seeds are the sweep's seeds axis (seeds = [...])",
    "out": "every trial trains into its own folder OUT/runs/NAME",
}
"""Training arguments a sweep sets itself, with why."""

PARAMETER_COLUMNS = ("key", "trial", "algorithm", "seed")
"""A trial's identity; the grid's argument names follow (:func:`columns`)."""

RESULT_COLUMNS = (
    *SUMMARY_CSV,
    "run",
    "timesteps",
    "best_validation_bsld",
    "easy_validation_bsld",
)
"""One evaluated policy of a trial (:data:`hpcgym.experiments.evaluate.SUMMARY_CSV`), then the trial's
run folder (relative to the sweep's folder), its timesteps and its validation scores."""

TIMING_COLUMNS = ("train_seconds", "trial_seconds")
"""The only columns that differ between two runs of one trial: training wall seconds
(validation included) and the whole trial's (evaluation included)."""

_TEXT = {"key", "trial", "algorithm", "policy", "kind", "run"}


def columns(spec: TrainSweepSpec) -> tuple[str, ...]:
    """The results table's columns: the trial's identity, the grid's names, the results, timing."""
    return PARAMETER_COLUMNS + tuple(spec.grid) + RESULT_COLUMNS + TIMING_COLUMNS


def _parse_cell(column: str, text: str) -> Any:
    """A cell of a training sweep's table: text columns as they are; numbers; JSON lists."""
    if column in _TEXT:
        return text
    if text == "":
        return None
    if text.startswith("["):
        try:
            return json.loads(text)
        except ValueError:
            pass
    return parse_value(text)


def _cell_value(value: Any) -> Any:
    """A grid value as the table holds it: tuples as JSON lists, everything else as is."""
    return json.dumps(list(value)) if isinstance(value, (tuple, list)) else value


def _tuple_fields(algorithm: str) -> set[str]:
    from hpcgym.agents.train import algorithm_module

    return {f.name for f in dataclasses.fields(algorithm_module(algorithm).Args) if "tuple[" in str(f.type)}


# ------------------------------------------------------------------------------- spec
@dataclass(frozen=True)
class Trial:
    """One training run of a sweep and the evaluation of its model.

    Attributes:
        algorithm: the training script.
        seed: the training seed.
        params: the grid's values of this trial, in the grid's order.
        fixed: the fixed training arguments (``[train.args]``).
        evaluation: the evaluation's settings (``[train.evaluate]``, defaults filled).
    """

    algorithm: str
    seed: int
    params: tuple[tuple[str, Any], ...]
    fixed: tuple[tuple[str, Any], ...]
    evaluation: tuple[tuple[str, Any], ...]

    def fields(self) -> dict[str, Any]:
        """The training arguments (``out`` excepted): fixed ones, the grid's, the seed."""
        return {**dict(self.fixed), **dict(self.params), "seed": self.seed}

    def key(self) -> str:
        """A stable 16-hex-digit key of the algorithm, the training arguments and the evaluation."""
        fields = self.fields()
        fields.pop("progress_bar", None)
        fields.pop("verbose", None)
        if fields.get("trace") is not None:
            fields["trace"] = Path(str(fields["trace"])).name
        text = json.dumps(
            {"algorithm": self.algorithm, "args": fields, "evaluate": dict(self.evaluation)},
            sort_keys=True,
            separators=(",", ":"),
            default=list,
        )
        return hashlib.sha1(text.encode()).hexdigest()[:16]

    @property
    def name(self) -> str:
        """The trial's name and run folder: ``ALGORITHM-seedS-KEY8``."""
        return f"{self.algorithm}-seed{self.seed}-{self.key()[:8]}"

    def describe(self) -> str:
        """``seed=1 learning_rate=0.0003`` -- what varies between trials."""
        return " ".join(f"{k}={_cell_value(v)}" for k, v in (("seed", self.seed), *self.params))


def _pairs(value: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in value.items())


@dataclass(frozen=True)
class TrainSweepSpec:
    """A training sweep: trials of one algorithm over seeds x a grid of training arguments.

    Attributes:
        algorithm: the training script (``hpcgym train ALGORITHM``).
        seeds: the training seeds.
        args: fixed training arguments (fields of the algorithm's ``Args``).
        grid: training arguments with lists of values; the trials are seeds x their product.
        sample: run a seeded random sample of this many trials (None: all).
        sample_seed: seed of the sample.
        baselines: dispatchers evaluated beside each trial's agent.
        window_jobs: jobs per test window (None: each trial's ``window_jobs``).
        windows: test windows (None: as many as the test split holds).
        reference: preset of the paired differences (added to the baselines if absent).
        eval_seed: seed of the bootstrap.
        n_resamples: bootstrap resamples.
        name: the sweep's name.
        source: where the spec came from, for messages.

    Raises:
        InvalidConfigError: a bad value, an unknown training argument (the message names
            it), or an argument the sweep sets itself (``seed``, ``out``).
        UnknownNameError: an unknown algorithm or baseline.
    """

    algorithm: str
    seeds: tuple[int, ...] = (1,)
    args: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    grid: Mapping[str, tuple[Any, ...]] = dataclasses.field(default_factory=dict)
    sample: int | None = None
    sample_seed: int = 0
    baselines: tuple[str, ...] = ("easy",)
    window_jobs: int | None = None
    windows: int | None = None
    reference: str = "easy"
    eval_seed: int = 0
    n_resamples: int = 9999
    name: str = "train"
    source: str = "flags"

    def _fail(self, key: str, message: str) -> InvalidConfigError:
        return InvalidConfigError(f"{self.source}: train.{key}: {message}")

    def __post_init__(self) -> None:
        from hpcgym.agents.train import ALGORITHMS, make_args
        from hpcgym.baselines import resolve_policy_name

        if self.algorithm not in ALGORITHMS:
            raise UnknownNameError(
                f"{self.source}: train.algorithm: unknown {self.algorithm!r}; known: {', '.join(ALGORITHMS)}"
            )
        seeds = self.seeds if isinstance(self.seeds, (list, tuple)) else (self.seeds,)
        if not seeds or any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in seeds):
            raise self._fail("seeds", f"give whole numbers >= 0, got {list(seeds)}")
        if len(set(seeds)) != len(seeds):
            raise self._fail("seeds", f"a seed is given twice in {list(seeds)}")
        object.__setattr__(self, "seeds", tuple(seeds))
        for table in ("args", "grid"):
            value = getattr(self, table)
            if not isinstance(value, Mapping):
                raise self._fail(table, f"must be a table of training arguments, got {value!r}")
            for name in value:
                if name in SWEEP_OWNS:
                    raise self._fail(f"{table}.{name}", f"set by the sweep: {SWEEP_OWNS[name]}")
        both = set(self.args) & set(self.grid)
        if both:
            raise self._fail("grid", f"{sorted(both)[0]} is also in train.args; give it in one of them")
        tuples = _tuple_fields(self.algorithm)
        grid: dict[str, tuple[Any, ...]] = {}
        for name, values in self.grid.items():
            if not isinstance(values, (list, tuple)) or not values:
                raise self._fail(f"grid.{name}", f"give a non-empty list of values, got {values!r}")
            if name in tuples and not all(isinstance(v, (list, tuple)) for v in values):
                raise self._fail(
                    f"grid.{name}", f"each value is a list, such as [[64, 64], [128]]; got {values!r}"
                )
            grid[name] = tuple(tuple(v) if isinstance(v, list) else v for v in values)
            if len(set(grid[name])) != len(grid[name]):
                raise self._fail(f"grid.{name}", f"a value is given twice in {list(values)}")
        object.__setattr__(self, "grid", grid)
        object.__setattr__(self, "args", dict(_pairs(self.args)))
        for key, low in (("sample", 1), ("window_jobs", 1), ("windows", 1), ("n_resamples", 1)):
            v = getattr(self, key)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < low):
                raise self._fail(key, f"must be a whole number >= {low}, got {v!r}")
        for key in ("sample_seed", "eval_seed"):
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise self._fail(key, f"must be a whole number >= 0, got {v!r}")
        baselines = self.baselines if isinstance(self.baselines, (list, tuple)) else (self.baselines,)
        try:
            canonical = tuple(resolve_policy_name(b) for b in baselines)
            reference = resolve_policy_name(self.reference)
        except (UnknownNameError, InvalidConfigError) as err:
            raise self._fail("evaluate.baselines", str(err)) from err
        object.__setattr__(self, "baselines", canonical)
        object.__setattr__(self, "reference", reference)
        # every trial's arguments checked before anything runs: an unknown name is named here
        for trial in self.trials():
            try:
                make_args(self.algorithm, **trial.fields())
            except InvalidConfigError as err:
                raise InvalidConfigError(f"{self.source}: train: {err}") from err

    def trials(self) -> list[Trial]:
        """Every trial, seeds outermost then the grid in its order, or the seeded sample of them."""
        evaluation = (
            ("baselines", list(self.baselines)),
            ("window_jobs", self.window_jobs),
            ("windows", self.windows),
            ("reference", self.reference),
            ("seed", self.eval_seed),
            ("n_resamples", self.n_resamples),
        )
        names = list(self.grid)
        out = [
            Trial(
                self.algorithm,
                seed,
                tuple(zip(names, combo, strict=True)),
                tuple(self.args.items()),
                evaluation,
            )
            for seed in self.seeds
            for combo in itertools.product(*(self.grid[n] for n in names))
        ]
        if self.sample is not None and self.sample < len(out):
            pick = np.random.default_rng(self.sample_seed).choice(len(out), size=self.sample, replace=False)
            out = [out[i] for i in sorted(pick.tolist())]
        return out

    @property
    def policies(self) -> int:
        """Rows per trial: the agent, the baselines and the reference."""
        return 1 + len(set(self.baselines) | {self.reference})

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str = "flags") -> TrainSweepSpec:
        """A spec from a parsed file's ``name`` and ``[train]`` table; an unknown key is named.

        Raises:
            InvalidConfigError: an unknown key, a simulation key beside ``[train]``, or a bad value.
        """
        extra = [k for k in data if k not in ("name", "train")]
        if extra:
            raise InvalidConfigError(
                f"{source}: {extra[0]}: a training sweep has only name and a [train] table "
                "(run simulations in another sweep)"
            )
        train = data.get("train")
        if not isinstance(train, Mapping):
            raise InvalidConfigError(f"{source}: train: must be a table ([train]), got {train!r}")
        unknown = [k for k in train if k not in TRAIN_KEYS]
        if unknown:
            raise InvalidConfigError(
                f"{source}: train: unknown key {unknown[0]!r}; a [train] table has: {', '.join(TRAIN_KEYS)}"
            )
        if "algorithm" not in train:
            raise InvalidConfigError(f"{source}: train.algorithm: missing (maskable-ppo or ppo)")
        evaluation = train.get("evaluate", {})
        if not isinstance(evaluation, Mapping):
            raise InvalidConfigError(f"{source}: train.evaluate: must be a table, got {evaluation!r}")
        unknown = [k for k in evaluation if k not in EVALUATE_KEYS]
        if unknown:
            raise InvalidConfigError(
                f"{source}: train.evaluate: unknown key {unknown[0]!r}; known: {', '.join(EVALUATE_KEYS)}"
            )
        kw: dict[str, Any] = {k: v for k, v in train.items() if k != "evaluate"}
        kw.update({("eval_seed" if k == "seed" else k): v for k, v in evaluation.items()})
        if "name" in data:
            kw["name"] = data["name"]
        return cls(**kw, source=source)


def is_training_spec(data: Any) -> bool:
    """Whether a parsed spec file describes a training sweep (it has a ``[train]`` table)."""
    return isinstance(data, Mapping) and "train" in data
