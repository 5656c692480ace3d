"""Sweeps under faults: SIGTERM ends the workers and says how to resume (issue 27, point 7)."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hpcgym.cli import main
from hpcgym.common.signals import TERMINATED_EXIT_CODE, Terminated, terminate_as_interrupt
from hpcgym.experiments.sweep import read_results
from hpcgym.experiments.sweep.backends import pool_results


@pytest.fixture
def late_sigterm_is_harmless() -> Iterator[list[int]]:
    """A SIGTERM handler around the test, so a signal that comes late does not end pytest."""
    got: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: got.append(signum))
    try:
        yield got
    finally:
        signal.signal(signal.SIGTERM, previous)


def _sigterm_once_workers_run(workers: int, timeout: float = 60.0) -> threading.Thread:
    """A thread that sends this process SIGTERM once ``workers`` more child processes are alive.

    Children an earlier test of this process left (a pytest-xdist worker runs many tests)
    are counted out, so the signal cannot come before the pool's workers run.
    """
    before = {p.pid for p in multiprocessing.active_children()}

    def send() -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len({p.pid for p in multiprocessing.active_children()} - before) >= workers:
                time.sleep(0.3)  # the workers are inside their first call
                os.kill(os.getpid(), signal.SIGTERM)
                return
            time.sleep(0.02)

    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    return thread


def _sleep(seconds: float, done: str) -> float:
    """Sleep, then leave a file in the folder ``done``: a run that was not killed finished."""
    time.sleep(seconds)
    Path(done, str(os.getpid())).touch()
    return seconds


def test_sigterm_kills_the_pool_workers_instead_of_waiting(
    tmp_path: Path, late_sigterm_is_harmless: list[int]
) -> None:
    sender = _sigterm_once_workers_run(2)
    jobs = [(30.0, str(tmp_path))] * 6
    rows = pool_results(_sleep, jobs, 2, mp_context=multiprocessing.get_context("fork"))
    with pytest.raises(Terminated), terminate_as_interrupt():
        list(rows)
    sender.join()
    assert list(tmp_path.iterdir()) == []  # the runs in progress were killed, not waited for
    assert multiprocessing.active_children() == []  # no worker outlives the sweep
    assert late_sigterm_is_harmless == []  # the signal went to the sweep
    assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL  # the old handler is back


def test_sigterm_on_a_process_pool_sweep_says_how_to_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], late_sigterm_is_harmless: list[int]
) -> None:
    # 400 runs of a few milliseconds: the sweep is still going when the signal comes
    loads = ",".join(f"{0.5 + 0.01 * i:.2f}" for i in range(100))
    args = ["sweep", "--dispatchers", "easy,easy++,fcfs,sjf", "--loads", loads]
    args += ["--trace", "bundled", "--processes", "2", "--no-progress", "-o", str(tmp_path)]
    sender = _sigterm_once_workers_run(2)
    code = main(args)
    sender.join()
    err = capsys.readouterr().err
    assert code == TERMINATED_EXIT_CODE == 143
    assert "hpcgym: terminated; finished runs are in" in err and "run the same command to resume" in err
    assert multiprocessing.active_children() == []
    done = read_results(tmp_path / "results.csv") if (tmp_path / "results.csv").exists() else []
    assert len(done) < 400 and len({r["key"] for r in done}) == len(done)


def test_a_closed_cluster_port_is_an_error_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'hpcgym[ray]')")
    import socket

    def connect(*args: object, **kwargs: object) -> None:  # Ray itself would retry for ever
        raise AssertionError("the address was handed to ray.init instead of refused at once")

    monkeypatch.setattr(ray, "init", connect)

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    args = ["sweep", "--dispatchers", "fcfs", "--trace", "bundled", "--jobs", "100", "--backend", "ray"]
    assert main([*args, "--address", f"127.0.0.1:{port}", "-o", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"--address 127.0.0.1:{port}: no Ray cluster answers there" in err
    assert f"ray start --head --port {port}" in err and "Traceback" not in err
    assert main([*args, "--address", "somehost", "-o", str(tmp_path)]) == 2
    assert "give HOST:PORT" in capsys.readouterr().err
    assert not (tmp_path / "results.csv").exists()


def test_sigterm_is_known_after_ray_turns_it_into_a_plain_interrupt(
    late_sigterm_is_harmless: list[int],
) -> None:
    from hpcgym.common.signals import was_terminated

    with pytest.raises(KeyboardInterrupt) as caught, terminate_as_interrupt():
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler raises in this thread before the sleep ends
        except Terminated:
            raise KeyboardInterrupt from None  # what Ray's wait does with it
    assert not isinstance(caught.value, Terminated) and was_terminated(caught.value)
    with terminate_as_interrupt():
        assert not was_terminated()  # a new block starts afresh
