"""Build hpcgym: the package (pyproject.toml) and its native core, compiled ahead of time.

The native core (``hpcgym.common._native_core``, see ``hpcgym/common/native.py``) is the
kernels a run calls from Python, compiled once here by numba's ahead-of-time compiler so
that a fresh install's first run does not compile them. It needs a C compiler. Without one,
or if the build fails, the install goes on without it (an optional extension) and the
kernels are compiled on first use, as numba always does; ``HPCGYM_NATIVE_BUILD=0`` skips it.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
CORE = "hpcgym.common._native_core"
# the modules that register the native core's kernels (hpcgym.common.native.register)
REGISTERING = ("hpcgym.machine.allocator", "hpcgym.sim.loop", "hpcgym.baselines._loop")


class BuildNative(build_ext):
    """Builds the native core with numba's ``pycc`` instead of compiling C sources."""

    def build_extension(self, ext: Extension) -> None:
        if ext.name != CORE:
            super().build_extension(ext)
            return
        from setuptools.errors import CompileError

        if os.environ.get("HPCGYM_NATIVE_BUILD", "1") == "0":
            raise CompileError("HPCGYM_NATIVE_BUILD=0: the native core is not built")
        target = Path(self.get_ext_fullpath(ext.name))
        sys.path.insert(0, str(ROOT))  # this tree's hpcgym, not an installed one
        try:
            from hpcgym.common import native

            print("hpcgym: compiling the native core (about a minute, once per install) ...", flush=True)
            t0 = time.perf_counter()
            built = native.build(target.parent, REGISTERING)
            if built != target:
                built.replace(target)
            self._native_meta = target.with_name(f"{native.EXTENSION}.json")
            print(f"hpcgym: native core built in {time.perf_counter() - t0:.0f} s", flush=True)
        except Exception as e:  # no C compiler, an unsupported platform: numba compiles at run time
            raise CompileError(f"hpcgym: native core not built ({type(e).__name__}: {e})") from e
        finally:
            sys.path.remove(str(ROOT))

    def copy_extensions_to_source(self) -> None:
        """In place (an editable install): the core's signatures file goes beside it too."""
        super().copy_extensions_to_source()
        meta = getattr(self, "_native_meta", None)
        if meta is not None and meta.exists():
            self.copy_file(str(meta), str(ROOT / "hpcgym" / "common" / meta.name))


setup(
    ext_modules=[Extension(CORE, sources=[], optional=True)],
    cmdclass={"build_ext": BuildNative},
)
