"""Where a sweep's runs execute: a local process pool or Ray.

``local`` runs on a process pool of one worker per core, each worker receiving every
trace once through the pool's initializer; ``ray`` runs every configuration as a Ray task
on a local Ray instance (all cores) or on the cluster of ``address`` (the head's
``HOST:PORT``, ``"auto"``, ``"ray://host:10001"``), every trace put in the object store
once. A task whose node is lost is run again on another node (Ray's default of 3
retries for a task whose worker dies), so a sweep survives the loss of a worker node;
the loss of the head ends it (rerun to resume). Both give the same
table apart from the timing columns: the simulations are deterministic.
:func:`pool_results` and :func:`start_ray` serve training sweeps too.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any

from hpcgym.common.errors import ClusterConnectionError, InvalidConfigError
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
    if address is not None:
        _host_port(address)  # the form, before any trace is read
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
    the whole queue. When the generator is closed or interrupted before the end (Ctrl-C,
    SIGTERM within :func:`~hpcgym.common.signals.terminate_as_interrupt`, a failed call)
    the calls not started yet are cancelled and the workers are killed, not waited for:
    a run cut short is run again on resuming, and no worker outlives the command.
    """
    pool = ProcessPoolExecutor(processes, mp_context=mp_context, initializer=initializer, initargs=initargs)
    pending: set[Future[Any]] = set()
    finished_all = False
    try:
        todo = iter(calls)
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
        finished_all = True
    finally:
        if finished_all:
            pool.shutdown(wait=True)
        else:
            _stop_now(pool)


def _stop_now(pool: ProcessPoolExecutor) -> None:
    """Cancel ``pool``'s queued calls and SIGKILL its workers (3.14's ``terminate_workers``, by hand).

    The pool's own thread cancels the queued calls (cancelling them here races with it
    marking them failed when the workers die). Kill, not terminate: forked workers
    inherit this process's SIGTERM handler, which within
    :func:`~hpcgym.common.signals.terminate_as_interrupt` only raises.
    """
    # the pool's own dict of workers: its manager thread may fork a replacement for a
    # worker killed here (3.11 does, before it sees the pool broken) into this same dict
    workers = getattr(pool, "_processes", None) or {}
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    killed: list[Any] = []
    for _ in range(2):
        for process in list(workers.values()):
            if process.is_alive():
                process.kill()
            killed.append(process)
        if manager is not None:
            manager.join(timeout=10)  # it has then stopped starting workers
    for process in killed:
        process.join(timeout=10)


def _ray_run(workload: Workload, cfg: RunConfig, options: dict[str, Any]) -> dict[str, Any]:
    return run_one(workload, cfg, options)


CONNECT_TIMEOUT_S = 5.0
"""How long :func:`check_address` waits for a cluster's port to answer."""

TOKEN_HELP = (
    "a cluster started by `ray start` (Ray 2.5x and later) uses token authentication: set "
    "RAY_AUTH_MODE=token where hpcgym runs (and on every `ray start --address` of a worker node), with "
    "the cluster's token in ~/.ray/auth_token, RAY_AUTH_TOKEN_PATH or RAY_AUTH_TOKEN"
)
"""What to do when a cluster refuses this process (the usual cause: a missing auth token)."""


def _host_port(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of ``HOST:PORT`` or ``ray://HOST:PORT``; None for ``auto`` (Ray finds it).

    Raises:
        InvalidConfigError: neither form.
    """
    if address == "auto":
        return None
    text = address.removeprefix("ray://")
    host, colon, port = text.rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise InvalidConfigError(
            f"--address {address}: give HOST:PORT (the head's `ray start --head --port`), "
            "ray://HOST:10001 (Ray Client) or auto (the cluster this node belongs to)"
        )
    return host.strip("[]"), int(port)


def check_address(address: str, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """Refuse at once a cluster address where nothing answers (Ray itself retries for ever).

    Raises:
        InvalidConfigError: the address is not ``HOST:PORT``, ``ray://HOST:PORT`` or ``auto``.
        ClusterConnectionError: the port is closed or does not answer within ``timeout``.
    """
    import socket

    target = _host_port(address)
    if target is None:
        return
    try:
        with socket.create_connection(target, timeout=timeout):
            pass
    except OSError as err:
        raise ClusterConnectionError(
            f"--address {address}: no Ray cluster answers there ({err.strerror or err}): start one "
            f"with `ray start --head --port {target[1]}` on {target[0]}, or give its head's HOST:PORT"
        ) from None


def start_ray(address: str | None, processes: int | None) -> bool:
    """Start a local Ray (``address`` None) or connect to ``address``, unless Ray is already up.

    A local Ray gets ``processes`` CPUs (default: all cores), no dashboard and a 200 MB
    object store. Either way the workers' output is not forwarded to this process
    (``log_to_driver=False``): Ray's messages about lost nodes and retried tasks would
    otherwise land in stdout, among ``--json`` output. Returns whether this call started
    Ray or connected to it (then the caller shuts it down).

    Raises:
        MissingExtraError: Ray is not installed.
        InvalidConfigError: ``address`` is not ``HOST:PORT``, ``ray://HOST:PORT`` or ``auto``.
        ClusterConnectionError: nothing answers at ``address``, or the cluster refuses this
            process (the message names RAY_AUTH_MODE=token, the usual fix).
    """
    from hpcgym.common.extras import require

    require("ray", what="--backend ray")
    import ray

    if ray.is_initialized():
        return False
    from hpcgym.common.signals import restore_handler, sigterm_handler

    handler = sigterm_handler()  # ray.init sets its own; SIGTERM must still stop a sweep cleanly
    if address is None:
        ray.init(
            num_cpus=processes or os.cpu_count() or 1,
            object_store_memory=200 * 1024 * 1024,
            include_dashboard=False,
            log_to_driver=False,
        )
    else:  # an existing cluster: its own settings; Ray refuses resource arguments here
        check_address(address)
        try:
            ray.init(address=address, log_to_driver=False)
        except ConnectionError as err:
            mode = os.environ.get("RAY_AUTH_MODE", "unset")
            cause = TOKEN_HELP if mode != "token" else "is the cluster's token the one this process reads?"
            raise ClusterConnectionError(
                f"--address {address}: the Ray cluster does not accept this process ({err}; "
                f"RAY_AUTH_MODE is {mode}): {cause}"
            ) from None
    restore_handler(handler)
    return True


def cluster_cpus(address: str | None, processes: int | None) -> int:
    """The CPUs a Ray sweep would run on: the cluster's at ``address``, else a local Ray's.

    A local Ray (``address`` None) gets ``processes`` or every core, without starting it.

    Raises:
        ClusterConnectionError, InvalidConfigError: as :func:`start_ray`.
    """
    if address is None:
        return processes or os.cpu_count() or 1
    import ray

    started = start_ray(address, processes)
    try:
        return max(1, int(ray.cluster_resources().get("CPU", 1)))
    finally:
        if started:
            ray.shutdown()


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
