"""Where a sweep's runs execute: a local process pool or Ray.

``local`` runs on a process pool of one worker per core, each worker receiving every
trace once through the pool's initializer; ``ray`` runs every configuration as a Ray task
on a local Ray instance (all cores) or on the cluster of ``address`` (``"auto"``,
``"ray://host:10001"``), every trace put in the object store once. Both give the same
table apart from the timing columns: the simulations are deterministic.
:func:`pool_results` and :func:`start_ray` serve training sweeps too.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any

from hpcgym.common.errors import InvalidConfigError
from hpcgym.experiments.sweep.runs import RunConfig, run_one
from hpcgym.workloads import Workload

BACKENDS = ("local", "ray")
"""Where a sweep runs (``--backend``): a local process pool or Ray."""


def check_run_options(backend: str, address: str | None, processes: int | None, max_runs: int | None) -> None:
    """Refuse an unknown backend, a cluster address without Ray, or a count below 1.

    Raises:
        InvalidConfigError: naming the flag.
    """
    if backend not in BACKENDS:
        raise InvalidConfigError(f"--backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if address is not None and backend != "ray":
        raise InvalidConfigError(f"--address {address}: a cluster address needs --backend ray")
    for name, v in (("processes", processes), ("max_runs", max_runs)):
        if v is not None and v < 1:
            raise InvalidConfigError(f"--{name.replace('_', '-')} must be at least 1, got {v}")


_WORKER_TRACES: dict[str, Workload] = {}


def _init_worker(traces: dict[str, Workload]) -> None:
    from hpcgym.baselines._kernels import load_kernels

    global _WORKER_TRACES
    _WORKER_TRACES = traces
    load_kernels()  # before the first run, so its run_seconds is the simulation's


def _run_in_worker(cfg: RunConfig, options: dict[str, Any]) -> dict[str, Any]:
    return run_one(_WORKER_TRACES[cfg.trace], cfg, options)


def _local(
    traces: dict[str, Workload], runs: Sequence[RunConfig], options: dict[str, Any], processes: int
) -> Iterator[dict[str, Any]]:
    """Rows of ``runs`` as they finish, on ``processes`` worker processes (1: in this process)."""
    if processes <= 1:
        for cfg in runs:
            yield run_one(traces[cfg.trace], cfg, options)
        return
    yield from pool_results(
        _run_in_worker, [(cfg, options) for cfg in runs], processes, _init_worker, (traces,)
    )


def pool_results(
    fn: Callable[..., Any],
    calls: Sequence[tuple[Any, ...]],
    processes: int,
    initializer: Callable[..., None] | None = None,
    initargs: tuple[Any, ...] = (),
    mp_context: Any = None,
) -> Iterator[Any]:
    """``fn(*call)`` of every call on a pool of ``processes`` workers, yielded as each finishes.

    At most ``2 x processes`` calls are submitted at a time, so Ctrl-C does not wait for
    the whole queue; the calls not started yet are cancelled when the generator is closed.
    """
    with ProcessPoolExecutor(
        processes, mp_context=mp_context, initializer=initializer, initargs=initargs
    ) as pool:
        pending: set[Future[Any]] = set()
        todo = iter(calls)
        try:
            for call in todo:
                pending.add(pool.submit(fn, *call))
                if len(pending) >= 2 * processes:
                    break
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in finished:
                    yield f.result()
                    nxt = next(todo, None)
                    if nxt is not None:
                        pending.add(pool.submit(fn, *nxt))
        finally:
            for f in pending:
                f.cancel()


def _ray_run(workload: Workload, cfg: RunConfig, options: dict[str, Any]) -> dict[str, Any]:
    return run_one(workload, cfg, options)


def start_ray(address: str | None, processes: int | None) -> bool:
    """Start a local Ray (``address`` None) or connect to ``address``, unless Ray is already up.

    A local Ray gets ``processes`` CPUs (default: all cores), no dashboard and a 200 MB
    object store. Returns whether this call started Ray (then the caller shuts it down).

    Raises:
        MissingExtraError: Ray is not installed.
    """
    from hpcgym.common.extras import require

    require("ray", what="--backend ray")
    import ray

    if ray.is_initialized():
        return False
    if address is None:
        ray.init(
            num_cpus=processes or os.cpu_count() or 1,
            object_store_memory=200 * 1024 * 1024,
            include_dashboard=False,
            log_to_driver=False,
        )
    else:  # an existing cluster: its own settings; Ray refuses resource arguments here
        ray.init(address=address)
    return True


def _ray(
    traces: dict[str, Workload],
    runs: Sequence[RunConfig],
    options: dict[str, Any],
    address: str | None,
    processes: int | None,
) -> Iterator[dict[str, Any]]:
    """Rows of ``runs`` as they finish, each a Ray task; every trace put in the object store once.

    Starts a local Ray (``address`` None: ``processes`` or all cores, no dashboard, a
    200 MB object store) or connects to ``address``, and shuts it down at the end unless
    Ray was already initialised by the caller.
    """
    import ray

    started = start_ray(address, processes)
    try:
        refs = {t: ray.put(w) for t, w in traces.items()}
        task = ray.remote(num_cpus=1)(_ray_run)
        pending = [task.remote(refs[cfg.trace], cfg, options) for cfg in runs]
        try:
            while pending:
                finished, pending = ray.wait(pending, num_returns=1)
                for ref in finished:
                    yield ray.get(ref)
        finally:
            for ref in pending:
                ray.cancel(ref, force=True)
    finally:
        if started:
            ray.shutdown()
