"""Build hpcgym: the package (pyproject.toml) and its native core, compiled ahead of time.

The native core (``hpcgym/common/native.py``) is the kernels a run calls from Python,
compiled once here by numba's ahead-of-time compiler so that a fresh install's first run
does not compile them: two extensions, the simulator's (``hpcgym.common._native_core``) and
the environment's (``hpcgym.common._native_env``), each compiled in a process of its own, in
parallel. It needs a C compiler. Without one, or if a build fails, the install goes on without
that extension (they are optional) and its kernels are compiled on first use, as numba always
does; ``HPCGYM_NATIVE_BUILD=0`` skips both.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
# extension -> (part, the modules that register its kernels with hpcgym.common.native.register)
NATIVE = {
    "hpcgym.common._native_core": (
        "core",
        ("hpcgym.machine.allocator", "hpcgym.sim.loop", "hpcgym.baselines._loop"),
    ),
    "hpcgym.common._native_env": ("env", ("hpcgym.env.observations", "hpcgym.env.dispatch")),
}
BUILD = """
import sys
from pathlib import Path
sys.path.insert(0, {root!r})  # this tree's hpcgym, not an installed one
from hpcgym.common import native
native.build(Path({out!r}), {modules!r}, {part!r})
"""


class BuildNative(build_ext):
    """Builds the native core's extensions with numba's ``pycc``, in parallel, not from C sources."""

    def build_extensions(self) -> None:
        native = [ext for ext in self.extensions if ext.name in NATIVE]
        for ext in self.extensions:
            if ext not in native:
                self.build_extension(ext)
        if not native:
            return
        if os.environ.get("HPCGYM_NATIVE_BUILD", "1") == "0":
            print("hpcgym: HPCGYM_NATIVE_BUILD=0: no native core; kernels compile on first use", flush=True)
            return
        print("hpcgym: compiling the native core (about a minute, once per install) ...", flush=True)
        t0 = time.perf_counter()
        self._native_meta = []
        running = []
        # an empty numba cache for the builds: a kernel numba cached earlier from this tree carries
        # the compiled code of the kernels it calls as they were then (numba checks only the
        # kernel's own file), and pycc would link that stale code into the extension
        cache = tempfile.TemporaryDirectory(prefix="hpcgym-build-")
        env = {**os.environ, "NUMBA_CACHE_DIR": cache.name}
        for ext in native:
            part, modules = NATIVE[ext.name]
            target = Path(self.get_ext_fullpath(ext.name))
            code = BUILD.format(root=str(ROOT), out=str(target.parent), modules=modules, part=part)
            running.append((ext, target, subprocess.Popen([sys.executable, "-c", code], env=env)))
        for ext, target, proc in running:
            if proc.wait() == 0 and target.exists():
                self._native_meta.append(target.with_name(target.name.split(".")[0] + ".json"))
            else:  # no C compiler, an unsupported platform: numba compiles these kernels at run time
                print(f"hpcgym: {ext.name} not built (exit status {proc.returncode}); its kernels "
                      "compile on first use", flush=True)  # fmt: skip
        cache.cleanup()
        print(f"hpcgym: native core built in {time.perf_counter() - t0:.0f} s", flush=True)

    def copy_extensions_to_source(self) -> None:
        """In place (an editable install): the signatures files go beside the extensions too."""
        super().copy_extensions_to_source()
        for meta in getattr(self, "_native_meta", []):
            if meta.exists():
                self.copy_file(str(meta), str(ROOT / "hpcgym" / "common" / meta.name))


setup(
    ext_modules=[Extension(name, sources=[], optional=True) for name in NATIVE],
    cmdclass={"build_ext": BuildNative},
)
