"""Say so when numba is about to compile kernels: the first run pauses for several seconds.

The kernels are compiled with ``cache=True``: the first run on a machine (or after the
kernels' source changed) compiles those it uses and stores them on disk; later runs
load them in a fraction of a second. A dispatcher compiles only its own family, in its
``reset`` (:func:`hpcgym.baselines._kernels.load_kernels`); once
:func:`announce_compilation` has turned the notice on (the command line does), one line
on stderr says so before kernels without a cache are compiled, and nothing is said
otherwise.

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
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
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


_announce = False
_said = False  # a notice was printed since the notice was last turned on or off


def announce_compilation(on: bool = True) -> bool:
    """Turn on (or off) the notice, for this process, before kernels without a cache are compiled.

    A command turns it on (``hpcgym.cli.main`` turns it off when the command ends); a
    library user's process stays quiet unless it asks.

    Returns:
        Whether it was on before.
    """
    global _announce, _said
    before = _announce
    _announce = bool(on)
    _said = False
    return before


@contextmanager
def announce_compilation_of(kernels: Iterable[Any], stream: TextIO | None = None) -> Iterator[bool]:
    """Around compiling ``kernels``: if the notice is on and one of them is cold, say so and time it.

    The first notice since the notice was turned on reads "compiling kernels, first run
    only ..."; later ones "compiling more kernels ...".

    Yields:
        Whether the notice was printed.
    """
    if not _announce or not cold_kernels(kernels):
        yield False
        return
    global _said
    out = sys.stderr if stream is None else stream
    # a command may compile more than one family (an evaluation: EASY's event loop, then
    # PRB's kernel, ...): its second notice says "more"
    what = "more kernels" if _said else "kernels, first run only"
    from hpcgym.common import native

    if native.status().startswith("stale"):  # an editable install whose kernels were edited
        what += " (the native core is older than the sources: `pip install -e .` rebuilds it)"
    _said = True
    print(f"hpcgym: compiling {what} ...", end="", file=out, flush=True)
    t0 = time.perf_counter()
    yield True
    print(f" done in {time.perf_counter() - t0:.1f} s", file=out, flush=True)
