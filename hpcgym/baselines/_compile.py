"""Say so when numba is about to compile the kernels: the first run pauses for several seconds.

The dispatcher kernels are compiled with ``cache=True``: the first run on a machine (or
after the kernels' source changed) compiles them, 6-9 s, and stores the result on disk;
later runs load it in a fraction of a second. :func:`announce_compilation` prints one
line on stderr before that first compilation and nothing otherwise.

How a cold cache is detected: a kernel is warm if it is already compiled or loaded in
this process (its ``signatures`` are not empty), or if numba's on-disk index for it
exists and matches the kernel's source file (numba's own freshness test: the index
records the source file's modification time and size). That reads one small file per
kernel, no compilation. The index is read through numba's cache object
(``dispatcher._cache._cache_file._load_index()``), which is not public API: if a future
numba moves it, the kernels count as warm and nothing is announced, so a run is never
held up or broken by the check.
"""

from __future__ import annotations

import pickle
import sys
import time
from collections.abc import Iterable
from typing import Any, TextIO


def is_cold(kernel: Any) -> bool:
    """Whether calling the numba dispatcher ``kernel`` now would compile it (no usable cache)."""
    if getattr(kernel, "signatures", None):
        return False  # compiled or loaded in this process already
    try:
        load_index = kernel._cache._cache_file._load_index
    except AttributeError:
        return False  # caching off, or numba's internals moved: say nothing
    try:
        return not load_index()
    except (OSError, EOFError, ValueError, pickle.UnpicklingError):
        return True  # an unreadable index: numba will compile


def cold_kernels(kernels: Iterable[Any]) -> list[str]:
    """Names of the numba dispatchers in ``kernels`` that would be compiled on their next call."""
    return [getattr(k, "__name__", repr(k)) for k in kernels if is_cold(k)]


def dispatcher_kernels() -> list[Any]:
    """The kernels every simulation with a reference dispatcher loads (see ``load_kernels``)."""
    from hpcgym.baselines import _kernels

    return [_kernels.list_kernel, _kernels.easy_kernel]


def announce_compilation(stream: TextIO | None = None) -> bool:
    """If the dispatcher kernels are not cached yet, say so, compile them now and say how long it took.

    Returns:
        Whether the kernels were compiled (and the message printed).
    """
    if not cold_kernels(dispatcher_kernels()):
        return False
    from hpcgym.baselines._kernels import load_kernels

    out = sys.stderr if stream is None else stream
    print("hpcgym: compiling kernels, first run only ...", end="", file=out, flush=True)
    t0 = time.perf_counter()
    load_kernels()
    print(f" done in {time.perf_counter() - t0:.1f} s", file=out, flush=True)
    return True
