"""Shared fixtures: hand-built workloads, SWF files, random workloads, the trace folder.

Hypothesis runs under the ``ci`` profile unless ``HYPOTHESIS_PROFILE`` names another:
derandomized and without an example database, so every run tries the same examples
(``dev`` explores new ones and remembers failures). ``long`` (``make long-test``) is
``ci`` with :data:`LONG_EXAMPLES` times the examples of each test and random workloads
of up to :data:`WORKLOAD_MAX_JOBS` jobs (hundreds, against 14) on up to
:data:`WORKLOAD_MAX_PROCS` processors: tests give their example counts through
:func:`examples`, since a count fixed in ``@settings`` overrides any profile.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

# Every call of a native kernel (hpcgym.common.native) first checks its arguments' types against
# the one signature it was compiled for: the whole suite checks that the callers keep to it.
os.environ.setdefault("HPCGYM_NATIVE", "check")

from hpcgym.workloads import Workload

settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, max_examples=200)
settings.register_profile("long", settings.get_profile("ci"), max_examples=1000)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
settings.load_profile(PROFILE)

LONG = PROFILE == "long"
"""Whether the ``long`` profile runs: many more and much larger examples."""
LONG_EXAMPLES = 10
"""How many times more examples each test tries under the ``long`` profile."""
WORKLOAD_MAX_JOBS = 300 if LONG else 14
"""The largest random workload (jobs) of :func:`random_workloads` by default."""
WORKLOAD_MAX_PROCS = 64 if LONG else 12
"""The largest random machine (processors) of :func:`random_workloads` by default."""


CP_PRESETS = {f"{m}{v}" for m in ("hcp", "pcp") for v in range(4)} | {"cph"}
"""The CP-SAT presets (hpcgym.baselines.cp)."""


def quick(policy: str) -> str:
    """``policy``, or for a CP preset the same with a 20 ms first limit (160 ms at most).

    Tests that loop over every preset run the CP ones this way: the paper's 1 s limit
    makes a run of a few hundred jobs take minutes. The limits are deterministic (the
    default), so a run repeats exactly.
    """
    return f"{policy}:delta=0.02,delta_max=0.16" if policy in CP_PRESETS else policy


def examples(n: int) -> int:
    """A test's number of Hypothesis examples: ``n``, or :data:`LONG_EXAMPLES` times more
    under the ``long`` profile."""
    return n * LONG_EXAMPLES if LONG else n


TRACES_DIR = Path(__file__).resolve().parents[2] / "shared" / "traces"
"""Where the development copies of the Parallel Workloads Archive traces live, if present."""

JobTuple = Sequence[float]


def build_workload(
    jobs: Sequence[JobTuple], procs: int, name: str = "hand", **columns: Sequence[int]
) -> Workload:
    """A workload of ``jobs`` on a machine of ``procs`` processors.

    Each job is ``(submit, runtime, procs, estimate[, user])``, in submit order; job ``i``
    gets SWF job id ``i + 1``; further integer columns (``group``, ``executable``, ...)
    by name. Built with :meth:`Workload.from_columns`, so it round-trips through SWF.
    """
    n = len(jobs)
    cols = np.array([list(j[:4]) for j in jobs], dtype=np.float64).reshape(n, 4)
    columns.setdefault("user", [int(j[4]) if len(j) > 4 else 1 for j in jobs])
    return Workload.from_columns(*cols.T, procs=procs, name=name, **columns)  # type: ignore[arg-type]


@st.composite
def random_workloads(
    draw: st.DrawFn,
    max_jobs: int | None = None,
    max_procs: int | None = None,
    fractional: bool = True,
) -> Workload:
    """Random workloads that provoke ties: jobs arriving, ending and fitting at one instant.

    Times are mostly whole seconds (so events coincide), runtimes may be 0, estimates
    may be shorter or longer than the runtime, users repeat. Sizes default to
    :data:`WORKLOAD_MAX_JOBS` and :data:`WORKLOAD_MAX_PROCS` (small, larger under the
    ``long`` profile).
    """
    max_jobs = WORKLOAD_MAX_JOBS if max_jobs is None else max_jobs
    max_procs = WORKLOAD_MAX_PROCS if max_procs is None else max_procs
    procs = draw(st.integers(1, max_procs))
    n = draw(st.integers(1, max_jobs))
    t = float(draw(st.integers(0, 5)))
    time_step = st.sampled_from([0.0, 0.5, 1.0, 2.5]) if fractional else st.just(1.0)
    jobs = []
    for _ in range(n):
        t += draw(st.integers(0, 6)) * draw(time_step)
        runtime = draw(st.integers(0, 30)) * draw(time_step)
        size = draw(st.integers(1, procs))
        estimate = float(draw(st.integers(1, 40)))
        user = draw(st.integers(1, 3))
        jobs.append((t, runtime, size, estimate, user))
    return build_workload(jobs, procs, name="random")


@pytest.fixture(scope="session")
def make_workload() -> Callable[..., Workload]:
    """:func:`build_workload`: ``make_workload([(submit, runtime, procs, estimate), ...], procs)``."""
    return build_workload


@pytest.fixture(scope="session")
def workload_strategy() -> Callable[..., st.SearchStrategy[Workload]]:
    """:func:`random_workloads`, for ``data.draw(workload_strategy())`` in hypothesis tests."""
    return random_workloads


@pytest.fixture(scope="session")
def write_swf_text() -> Callable[[Path, str], Path]:
    """Write SWF text to a file (gzipped when its name ends in ``.gz``) and return the path."""

    def write(path: Path, text: str) -> Path:
        import gzip

        data = text.encode("utf-8")
        path.write_bytes(gzip.compress(data) if path.name.endswith(".gz") else data)
        return path

    return write


@pytest.fixture(scope="session")
def traces_dir() -> Path:
    """The folder of development traces; skips the test when it is not there."""
    if not TRACES_DIR.is_dir() or not any(TRACES_DIR.glob("*.swf.gz")):
        pytest.skip("the development traces (shared/traces/*.swf.gz next to the repository) are not present")
    return TRACES_DIR
