"""The native core: the kernels a run calls from Python, compiled ahead of time at install.

numba compiles a kernel the first time it is called and caches it on disk; on a fresh
install that first run spends most of its time compiling (the event loop alone, about 30 s;
the environment's step about 30 s more). The kernels Python calls directly -- the compiled
event loops, the engine's step kernels, the allocator's ``fits``, the environment's compiled
step and its histograms -- are therefore also compiled once when the package is built, by
numba's ahead-of-time compiler (``numba.pycc``), into two extension modules (:data:`PARTS`:
``hpcgym.common._native_core`` and ``_native_env``, built in parallel). :func:`get` returns a
kernel's native version when the core is there and was built from the package's current
sources, and the numba kernel itself otherwise (no compiler at install, a platform without a
build, sources edited since): the native and the numba kernel are one source compiled by one
compiler, so every schedule is the same either way, only the first run's compile time differs.

* **Which kernels.** A module registers a kernel with :func:`register`: the numba dispatcher
  and a function returning arguments of the exact types its Python callers pass (the native
  version is compiled for that one signature, as numba would be on the first call). The build
  (:func:`build`) imports the registering modules, types those arguments with
  ``numba.typeof`` and compiles every kernel of a part into its extension. A kernel is known
  by its module and name (``hpcgym.sim._kernels.instant``), so :func:`get` needs no
  registration.
* **When a native is stale.** The build writes a signatures file beside each extension
  (``_native_core.json``, ``_native_env.json``): the SHA-256 digest of every ``.py`` file of
  the packages the kernels are compiled from (:data:`PACKAGES`) and each export's signature.
  The core is used only while that digest matches the installed sources (checked once, on
  the first :func:`get`), so an editable install whose sources were edited falls back to
  numba until it is reinstalled.
* **Argument types.** A native kernel converts its arguments by its one signature and checks
  no more than an array's item size; its Python callers pass the types of the registered
  example (each call site says how it guarantees them). ``HPCGYM_NATIVE=check`` makes every
  native call compare its arguments' numba types with the signature first and raise on a
  difference (the test suite runs so); ``HPCGYM_NATIVE=0`` turns the core off.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hpcgym.common.files import write_atomic

EXTENSION = "_native_core"
"""The extension of the simulator's kernels, in this package (``hpcgym.common._native_core``)."""
PARTS = {"core": EXTENSION, "env": "_native_env"}
"""The extensions, by part: the simulator's kernels, and the environment's (built in parallel)."""
PACKAGES = ("common", "machine", "workloads", "predict", "sim", "baselines", "env")
"""The packages of ``hpcgym`` whose sources the native kernels are compiled from."""
ENV_VAR = "HPCGYM_NATIVE"
"""``0`` turns the native core off; ``check`` checks every native call's argument types."""

HERE = Path(__file__).resolve().parent


_examples: dict[str, tuple[str, Any, Callable[[], tuple[Any, ...]]]] = {}  # key -> (part, kernel, example)
_table: dict[str, Callable[..., Any]] | None = None  # key -> native (empty: none usable)
_resolved: dict[int, tuple[Any, Any]] = {}  # id(kernel) -> (kernel, what get gives): one lookup per call
_status = "not loaded"


def key(kernel: Any) -> str:
    """A numba kernel's name in the native core: its module and function name."""
    return f"{kernel.py_func.__module__}.{kernel.py_func.__name__}"


def register(kernel: Any, example: Callable[[], tuple[Any, ...]], part: str = "core") -> None:
    """Compile ``kernel`` into the native core's ``part`` for the types of ``example()``'s arguments."""
    if part not in PARTS:
        raise ValueError(f"unknown part {part!r} of the native core (one of {', '.join(PARTS)})")
    _examples[key(kernel)] = (part, kernel, example)


def get(kernel: Any) -> Any:
    """``kernel``'s native version if the core has a current one, else ``kernel`` itself."""
    hit = _resolved.get(id(kernel))
    if hit is not None and hit[0] is kernel:
        return hit[1]
    table = _table if _table is not None else _load()
    fn = table.get(key(kernel), kernel) if table else kernel
    _resolved[id(kernel)] = (kernel, fn)
    return fn


def has(kernel: Any) -> bool:
    """Whether :func:`get` gives ``kernel``'s native version (nothing of it is compiled on a call)."""
    return get(kernel) is not kernel


def status() -> str:
    """How the native core stands, in a few words (``hpcgym --version`` style)."""
    if _table is None:
        _load()
    return _status


def reload() -> None:
    """Forget the loaded core: the next :func:`get` looks again (a new build, ``HPCGYM_NATIVE`` changed)."""
    global _table, _status
    _table, _status = None, "not loaded"
    _resolved.clear()


def source_digest(root: Path | None = None) -> str:
    """SHA-256 of the ``.py`` files of :data:`PACKAGES` under the package folder ``root``."""
    root = HERE.parent if root is None else root
    h = hashlib.sha256()
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            h.update(path.relative_to(root).as_posix().encode())
            h.update(b"\0")
            h.update(path.read_bytes())
            h.update(b"\0")
    return h.hexdigest()


def _load() -> dict[str, Callable[..., Any]]:
    global _table, _status
    _table = {}
    mode = os.environ.get(ENV_VAR, "1").strip().lower()
    if mode in ("0", "off", "false", "no"):
        _status = f"off ({ENV_VAR}={mode})"
        return _table
    found = []
    for extension in PARTS.values():
        try:
            meta = json.loads((HERE / f"{extension}.json").read_text())
            found.append((meta, importlib.import_module(f"{__package__}.{extension}")))
        except (OSError, ValueError, ImportError):
            continue  # not built: its kernels compile on first use
    if not found:
        _status = "absent: kernels compile on first use"
        return _table
    digest = source_digest()
    if any(meta.get("digest") != digest for meta, _ in found):
        _status = "stale (sources changed since the build): kernels compile on first use"
        return _table
    for meta, core in found:
        for name, sig in meta.get("exports", {}).items():
            fn = getattr(core, _symbol(name), None)
            if fn is not None:
                _table[name] = _checked(fn, name, sig) if mode == "check" else fn
    _status = f"loaded ({len(_table)} kernels)"
    return _table


def _checked(fn: Callable[..., Any], name: str, sig: list[str]) -> Callable[..., Any]:
    """``fn`` comparing its arguments' numba types with its signature ``sig`` before each call.

    An argument must have its parameter's type, except that a writable array may be passed
    where the kernel was compiled for a read-only one (it reads it only).

    numba's own argument fingerprints (what its dispatchers key compiled versions on) are
    cached once they are found to match, so a check costs a microsecond or two per call.
    """
    from numba._dispatcher import compute_fingerprint

    matching: set[tuple[Any, ...]] = set()

    def call(*args: Any) -> Any:
        try:
            key: tuple[Any, ...] | None = tuple(map(compute_fingerprint, args))
        except (TypeError, ValueError, NotImplementedError):
            key = None  # a value numba has no fingerprint for: typed in full
        if key is None or key not in matching:
            got = argument_types(args)
            pairs = zip(got, sig, strict=False)
            if len(got) != len(sig) or any(g != t and f"readonly {g}" != t for g, t in pairs):
                called, compiled = ", ".join(got), ", ".join(sig)
                raise TypeError(f"native {name}: called with ({called}), compiled for ({compiled})")
            if key is not None:
                matching.add(key)
        return fn(*args)

    return call


def _symbol(name: str) -> str:
    """The extension's attribute for the kernel ``name`` (``hpcgym.sim._kernels.instant``)."""
    return name.replace(".", "__")


def argument_types(args: tuple[Any, ...]) -> list[str]:
    """The types of ``args`` as numba names them (what :func:`build` compiles for)."""
    from numba import typeof

    return [str(typeof(a)) for a in args]


def build(output_dir: Path, modules: tuple[str, ...], part: str = "core", *, verbose: bool = False) -> Path:
    """Compile every kernel of ``part`` the ``modules`` register into its extension, in ``output_dir``.

    Writes the extension and its signatures file (``_native_core.json`` for the core: the
    source digest and each kernel's signature); returns the extension's path. Needs a C
    compiler (numba's ``pycc`` links with it).
    """
    import warnings

    from numba import typeof

    for module in modules:
        importlib.import_module(module)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pycc's pending deprecation: it is what ships today
        from numba.pycc import CC
    extension = PARTS[part]
    cc = CC(extension, source_module=__name__)
    cc.output_dir = str(output_dir)
    cc.verbose = verbose
    signatures = {}
    for name, (kernel_part, kernel, example) in sorted(_examples.items()):
        if kernel_part == part:
            args = example()
            cc.export(_symbol(name), tuple(typeof(a) for a in args))(kernel.py_func)
            signatures[name] = argument_types(args)
    output_dir.mkdir(parents=True, exist_ok=True)
    cc.compile()
    meta = {"digest": source_digest(), "exports": signatures}
    write_atomic(output_dir / f"{extension}.json", (json.dumps(meta, indent=1) + "\n").encode())
    return output_dir / cc.output_file
