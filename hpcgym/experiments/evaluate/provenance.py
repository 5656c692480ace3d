"""Where an evaluation's windows lie for a saved model: its train, validation or test split, or elsewhere.

A model saved by ``hpcgym train`` records its trace: name, job count, content hash, the job
ranges of its splits and a fingerprint of its jobs (:func:`hpcgym.agents.models.trace_provenance`).
:func:`model_windows` matches the evaluated workload against that record:

* ``identical``: the same content hash; a window's jobs are the model's jobs of the same
  indices;
* ``same jobs``: another hash, but the fingerprint's job numbers are found in the workload
  with the same keys (at least 90 % of those found): the trace cut (``--jobs``,
  ``--offset``), load-scaled or read again. A window's jobs are placed in the model's splits
  by their SWF job numbers (the splits are ranges of job numbers when the numbers grow with
  the index, as in the archive's logs);
* ``same name``: a model saved before the fingerprint existed, on a trace of the same name;
  placed by index (shifted by the workload's ``--offset``, from its load report);
* ``other trace``: none of these: the evaluation is a **transfer run**.

A model trained on several traces (``hpcgym train --traces``) records each; the workload
is matched against each in turn, and the first that matches places the windows in its
splits. Matching none of them is a transfer run.

Each window then lies in one or more of the model's splits (``train``, ``validation``,
``test``) or holds jobs outside them (``unseen``: a longer copy of the log). The
evaluation's ``held_out`` is true only when no window holds a job of the model's train or
validation split; :func:`check_held_out` makes a test-split evaluation whose windows do an
error that names them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hpcgym.common.errors import InvalidConfigError
from hpcgym.env import episodes
from hpcgym.workloads import Workload, content_sha256, job_keys

PARTS = ("train", "validation", "test", "unseen")
"""Where a window's jobs can lie for a model trained on the same trace, in report order."""

SAME_JOBS_SHARE = 0.9
"""Share of the fingerprint's job numbers found in the workload whose keys must match for
"the same jobs" (a few keys may differ where a trace was read with other rules)."""


@dataclass(frozen=True)
class ModelWindows:
    """Where the windows lie for one model.

    Attributes:
        model: the model's name in the tables.
        trace: the name of the trace it was trained on.
        match: ``identical``, ``same jobs``, ``same name`` or ``other trace`` (see the module).
        per_window: for each window, the model's splits it holds jobs of (:data:`PARTS`);
            empty lists for a transfer run.
        splits: the model's splits: ``jobs`` ``[first, stop)`` and, when recorded, ``job_ids``.
    """

    model: str
    trace: str
    match: str
    per_window: list[list[str]]
    splits: dict[str, dict[str, list[int]]]

    @property
    def relation(self) -> str:
        """``transfer``, or the model's splits the windows hold jobs of, joined by ``+`` (``test``)."""
        if self.match == "other trace":
            return "transfer"
        seen = {p for parts in self.per_window for p in parts}
        return "+".join(p for p in PARTS if p in seen)

    @property
    def held_out(self) -> bool:
        """No window holds a job the model was trained or validated on."""
        return not any(p in ("train", "validation") for parts in self.per_window for p in parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "trace": self.trace,
            "match": self.match,
            "relation": self.relation,
            "held_out": self.held_out,
            "per_window": self.per_window,
            "splits": self.splits,
        }

    def note(self, evaluated: str) -> str:
        """One line for the table's notes."""
        if self.match == "other trace":
            return f"{self.model}: a transfer run: trained on {self.trace}, evaluated on {evaluated}"
        where = f"of the trace it was trained on ({self.trace}; matched: {self.match})"
        if self.held_out:
            return f"{self.model}: the windows lie in the {self.relation} split {where}"
        return f"{self.model}: NOT held out: the windows hold jobs of its {self.relation} split(s) {where}"


def _recorded_splits(env: Mapping[str, Any], kwargs: Mapping[str, Any]) -> dict[str, dict[str, list[int]]]:
    """A training trace's splits: recorded, or (metadata without them) recomputed from the
    model's settings ``kwargs``."""
    if "splits" in env:
        return {k: dict(v) for k, v in env["splits"].items()}
    fractions = tuple(kwargs.get("split_fractions") or (0.7, 0.15, 0.15))
    job_range = kwargs.get("job_range")
    out = {}
    for split in ("train", "validation", "test"):
        rng = (int(job_range[0]), int(job_range[1])) if split == "train" and job_range else None
        lo, hi = episodes.split_range(int(env["trace_jobs"]), split, fractions, rng)  # type: ignore[arg-type]
        out[split] = {"jobs": [lo, hi]}
    return out


def _same_jobs(fingerprint: Mapping[str, Any], w: Workload) -> bool:
    """Whether the fingerprint's jobs found in ``w`` (by job number) have the same keys."""
    ids = np.asarray(fingerprint["job_id"], dtype=np.int64)
    keys = np.asarray(fingerprint["key"], dtype=np.int64)
    mine = np.asarray(w.job_id, dtype=np.int64)
    order = np.argsort(mine, kind="stable")
    pos = np.clip(np.searchsorted(mine, ids, sorter=order), 0, max(len(mine) - 1, 0))
    found = mine[order[pos]] == ids if len(mine) else np.zeros(len(ids), dtype=bool)
    if not found.any():
        return False
    same = job_keys(w)[order[pos[found]]].astype(np.int64) == keys[found]
    return bool(same.mean() >= SAME_JOBS_SHARE)


def _parts_by_index(lo: int, hi: int, splits: Mapping[str, Mapping[str, Sequence[int]]]) -> list[str]:
    parts = [s for s, r in splits.items() if lo < r["jobs"][1] and r["jobs"][0] < hi]
    covered = sum(max(0, min(hi, r["jobs"][1]) - max(lo, r["jobs"][0])) for r in splits.values())
    return [p for p in PARTS if p in parts or (p == "unseen" and covered < hi - lo)]


def _parts_by_id(ids: np.ndarray, splits: Mapping[str, Mapping[str, Sequence[int]]]) -> list[str]:
    inside = np.zeros(len(ids), dtype=bool)
    parts = []
    for s, r in splits.items():
        a, b = r["job_ids"]
        hit = (ids >= a) & (ids <= b)
        inside |= hit
        if hit.any():
            parts.append(s)
    return [p for p in PARTS if p in parts or (p == "unseen" and not inside.all())]


def _match(env: Mapping[str, Any], w: Workload) -> str:
    """How ``w`` matches one recorded training trace (see the module)."""
    if env.get("trace_sha256") and env["trace_sha256"] == content_sha256(w):
        return "identical"
    if "fingerprint" in env:
        return "same jobs" if _same_jobs(env["fingerprint"], w) else "other trace"
    return "same name" if w.name == env.get("trace_name") else "other trace"


def model_windows(
    model: str, metadata: Mapping[str, Any], w: Workload, offsets: Sequence[int], window_jobs: int
) -> ModelWindows:
    """Where the windows (first jobs ``offsets``, ``window_jobs`` each) of ``w`` lie for the model.

    A model trained on several traces (``hpcgym train --traces``) is matched against each
    of them in turn; the first that matches is the one whose splits place the windows.
    None matching: a transfer run (``trace`` names them all).
    """
    from hpcgym.agents.models import model_logs

    logs = model_logs(metadata)
    kwargs = metadata["env"]["kwargs"]
    for env in logs:
        match = _match(env, w)
        if match != "other trace":
            break
    else:
        names = ", ".join(str(e.get("trace_name") or "the bundled trace") for e in logs)
        splits = _recorded_splits(logs[0], kwargs) if len(logs) == 1 else {}
        return ModelWindows(model, names, "other trace", [[] for _ in offsets], splits)
    splits = _recorded_splits(env, kwargs)
    name = str(env.get("trace_name") or "the bundled trace")
    by_id = (
        match == "same jobs"
        and env.get("job_ids_increasing")
        and all("job_ids" in r for r in splits.values())
    )
    base = w.report.offset if w.report is not None else 0  # the jobs --offset skipped
    per_window = []
    for off in offsets:
        if by_id:
            per_window.append(_parts_by_id(np.asarray(w.job_id[off : off + window_jobs]), splits))
        else:
            per_window.append(_parts_by_index(base + off, base + off + window_jobs, splits))
    return ModelWindows(model, name, match, per_window, splits)


def check_held_out(mw: ModelWindows, w: Workload, offsets: Sequence[int], window_jobs: int) -> None:
    """A test-split evaluation whose windows hold the model's train or validation jobs is an error.

    Raises:
        InvalidConfigError: naming the windows, the model's splits and what to do instead.
    """
    if mw.held_out:
        return
    bad = [
        (k, parts)
        for k, parts in enumerate(mw.per_window)
        if any(p in ("train", "validation") for p in parts)
    ]
    shown = "; ".join(
        f"window {k + 1} (jobs {offsets[k]}-{offsets[k] + window_jobs - 1} of these {len(w)}): "
        f"{'+'.join(p for p in parts if p != 'unseen')}"
        for k, parts in bad[:4]
    ) + ("; ..." if len(bad) > 4 else "")
    ranges = ", ".join(
        f"{s} jobs [{r['jobs'][0]}, {r['jobs'][1]})"
        + (f" (job numbers {r['job_ids'][0]}-{r['job_ids'][1]})" if "job_ids" in r else "")
        for s, r in mw.splits.items()
        if s in ("train", "validation")
    )
    raise InvalidConfigError(
        f"model {mw.model!r}: {len(bad)} of the {len(offsets)} test windows hold jobs it was trained or "
        f"validated on ({shown}). Its splits of {mw.trace}: {ranges}. The test split here is that of "
        f"this {len(w)}-job workload, not the model's: evaluate on the model's whole trace (no --jobs or "
        "--offset), or give --split train or --split validation to score it on those jobs knowingly"
    )
