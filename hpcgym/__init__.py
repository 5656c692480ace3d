"""hpcgym: a Gymnasium environment and benchmark suite for HPC job dispatching.

``import hpcgym`` registers the environment ids (``hpcgym/Dispatch-v1`` ...) with
Gymnasium without importing Gymnasium itself: if it is not loaded yet, the ids are
registered the moment it is, so ``import hpcgym.sim`` stays free of Gymnasium.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import warnings
from typing import Any

from hpcgym.common.errors import (
    EmptyWorkloadError,
    HpcGymError,
    InvalidConfigError,
    InvalidDecisionError,
    MissingExtraError,
    TraceFormatError,
    TraceWarning,
    UnknownNameError,
)
from hpcgym.workloads import LoadReport, Workload, load_default, read_swf, write_swf

__version__ = "0.1.0"

ENV_IDS: dict[str, dict[str, Any]] = {
    "hpcgym/Dispatch-v1": {},
    "hpcgym/DispatchBackfill-v1": {"backfill": "easy"},
    "hpcgym/DispatchPolicy-v1": {"mode": "policy"},
    "hpcgym/DispatchLearnedBackfill-v1": {"mode": "backfill"},
    "hpcgym/Dispatch-v0": {},
    "hpcgym/DispatchBackfill-v0": {"backfill": "easy"},
    "hpcgym/DispatchPolicy-v0": {"mode": "policy"},
}
"""Registered environment ids and the keyword arguments each fixes (see ``hpcgym.env``).

``v1`` is the current version; ``v0`` ids stay registered (entry point
``DispatchEnvV0``) and differ only in their default observation on machines of more than
one resource type (see the Version History of ``hpcgym.env.DispatchEnv``)."""

ENTRY_POINTS = {
    "v0": "hpcgym.env.dispatch:DispatchEnvV0",
    "v1": "hpcgym.env.dispatch:DispatchEnv",
}
"""The class behind each version of :data:`ENV_IDS`."""

VECTOR_ENTRY_POINTS = {
    "v0": "hpcgym.env.vector:DispatchVectorEnvV0",
    "v1": "hpcgym.env.vector:DispatchVectorEnv",
}
"""The native vector environment of each version (``gymnasium.make_vec``'s ``vector_entry_point``)."""

USER_ENV_IDS: dict[str, str] = {
    "hpcgym/UserSubmit-v0": "hpcgym.env.usersubmit:UserSubmitEnv",
}
"""The user-side environments (003's job molding and delayed submission as actions) and their classes."""

__all__ = [
    "ENV_IDS",
    "USER_ENV_IDS",
    "EmptyWorkloadError",
    "HpcGymError",
    "InvalidConfigError",
    "InvalidDecisionError",
    "LoadReport",
    "MissingExtraError",
    "TraceFormatError",
    "TraceWarning",
    "UnknownNameError",
    "Workload",
    "__version__",
    "load_default",
    "read_swf",
    "register_envs",
    "write_swf",
]


def register_envs() -> None:
    """Register every id of :data:`ENV_IDS` and :data:`USER_ENV_IDS` with Gymnasium (idempotent)."""
    import gymnasium

    for env_id, kwargs in ENV_IDS.items():
        if env_id not in gymnasium.registry:
            version = env_id.rsplit("-", 1)[1]
            gymnasium.register(
                id=env_id,
                entry_point=ENTRY_POINTS[version],
                vector_entry_point=VECTOR_ENTRY_POINTS[version],
                kwargs=dict(kwargs),
            )
    for env_id, entry_point in USER_ENV_IDS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=entry_point)


class _RegisterAfterGymnasium(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Import hook: when ``gymnasium`` is first imported, register our ids, then step aside."""

    def find_spec(
        self, fullname: str, path: Any, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "gymnasium":
            return None
        for finder in sys.meta_path:  # whoever would find it without us
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        self._inner = spec.loader
        spec.loader = self
        return spec

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> Any:
        return self._inner.create_module(spec)

    def exec_module(self, module: Any) -> None:
        # hand the module its real loader back before it runs, then register
        inner = self._inner
        module.__loader__ = inner
        if module.__spec__ is not None:
            module.__spec__.loader = inner
        _remove_hook()
        inner.exec_module(module)
        try:
            register_envs()
        except Exception as err:  # pragma: no cover - never break importing gymnasium
            warnings.warn(f"hpcgym: could not register the environments: {err}", stacklevel=2)


def _remove_hook() -> None:
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _RegisterAfterGymnasium)]


if "gymnasium" in sys.modules:
    register_envs()
elif not any(isinstance(f, _RegisterAfterGymnasium) for f in sys.meta_path):
    sys.meta_path.insert(0, _RegisterAfterGymnasium())
