"""D: the data-driven profile heuristic of Galleguillos et al. (2017, 001) section 3.

The prediction is the run time of the user's last terminated job with the closest
profile (job name or its prefix, queue, wall-time, resources), capped by the wall-time.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np

from hpcgym.common.errors import InvalidConfigError
from hpcgym.predict.base import Predictor


def trailing_number_prefix(names: Sequence[str]) -> Callable[[int], str]:
    """A job-name prefix function for :class:`ProfilePredictor` over a job table's names.

    The predictor sees job names as codes (``workload.executable``, indices into
    ``workload.names["job_name"]``); this maps a code to its name without the trailing
    number (``run_a2`` -> ``run_a``); a code without a name (-1) to ``""``.

    >>> prefix = trailing_number_prefix(["run_a1", "run_a2", "post"])
    >>> prefix(0), prefix(1), prefix(2), prefix(-1)
    ('run_a', 'run_a', 'post', '')
    """
    prefixes = [n.rstrip("0123456789") for n in names]

    def prefix(code: int) -> str:
        return prefixes[code] if 0 <= code < len(prefixes) else ""

    return prefix


class ProfilePredictor(Predictor):
    """D: the data-driven profile heuristic of Galleguillos et al. (2017) section 3.

    For a new job, look through the same user's terminated jobs for the *last* one
    (most recently terminated) whose profile matches, by these rules in this order,
    and predict its run time:

    1. same job name, queue, wall-time and resources (full profile);
    2. same name prefix, queue, wall-time and resources;
    3. same name, queue and wall-time (resources may differ);
    4. same name prefix, queue and wall-time;
    5. same name;
    6. same name prefix;
    7. otherwise the wall-time.

    The prediction is capped by the wall-time (the estimate). ``rule[job]`` records which
    rule gave it (1-7).

    A job table's job names are text: by default a name's prefix is the name without
    its trailing number (``run_a2`` -> ``run_a``), 001's example of "the same job name
    followed by a number (e.g. job1, job2)". On SWF traces the executable id (field 14)
    stands in for the job name, the queue is field 15 and the resources are the
    requested processors. A numeric id has no prefix, so there are no prefix rules by
    default and rules 2, 4 and 6 are skipped. A missing name or executable (-1) acts as
    one name shared by all of a user's jobs; then rule 5 is simply "the user's last job".

    Args:
        name_prefix: ``"auto"`` (default) for the rule above; a function mapping a job
            name code (``workload.executable``) to its prefix (e.g. ``lambda n: n // 100``
            for numbered SWF executables); None for no prefix rules.
    """

    name = "profile"

    def __init__(self, name_prefix: Callable[[Any], Hashable] | str | None = "auto") -> None:
        super().__init__()
        if name_prefix is not None and name_prefix != "auto" and not callable(name_prefix):
            raise InvalidConfigError(
                "profile: name_prefix must be a function of the job name (Python API only), "
                f"'auto' or None, got {name_prefix!r}"
            )
        self.name_prefix = name_prefix
        self._prefix: Callable[[Any], Hashable] | None = None
        self.rule: np.ndarray = np.zeros(0, dtype=np.int8)

    def reset(self, workload: Any) -> None:
        super().reset(workload)
        n = len(self.estimate)
        self._user: list[int] = np.asarray(workload.user).tolist()
        self._name: list[Any] = np.asarray(getattr(workload, "executable", np.full(n, -1))).tolist()
        self._queue: list[int] = np.asarray(getattr(workload, "queue", np.full(n, -1))).tolist()
        self._procs: list[int] = np.asarray(workload.procs_req).tolist()
        self._est: list[float] = self.estimate.tolist()
        self._last: list[dict[tuple[Any, ...], float]] = [{} for _ in range(6)]
        self.rule = np.full(n, 7, dtype=np.int8)
        prefix = self.name_prefix
        if prefix == "auto":
            names = getattr(workload, "names", {}).get("job_name", ())
            prefix = trailing_number_prefix(names) if names else None
        self._prefix = prefix  # type: ignore[assignment]

    def _keys(self, job: int) -> list[tuple[Any, ...] | None]:
        u, nm, q, e, r = self._user[job], self._name[job], self._queue[job], self._est[job], self._procs[job]
        if self._prefix is None:
            return [(u, nm, q, e, r), None, (u, nm, q, e), None, (u, nm), None]
        p = self._prefix(nm)
        return [(u, nm, q, e, r), (u, p, q, e, r), (u, nm, q, e), (u, p, q, e), (u, nm), (u, p)]

    def on_submit(self, job: int, now: float) -> None:
        for i, key in enumerate(self._keys(job)):
            if key is None:
                continue
            v = self._last[i].get(key)
            if v is not None:
                est = self._est[job]
                self.prediction[job] = v if v < est else est
                self.rule[job] = i + 1
                return

    def on_end(self, job: int, now: float, runtime: float) -> None:
        for last, key in zip(self._last, self._keys(job), strict=True):
            if key is not None:
                last[key] = runtime
