"""Machine presets: machines by name, from the data files of ``hpcgym/machine/presets``.

Every ``*.toml`` file of that folder is a preset named after the file (parsed when first
built); :func:`register_machine` adds others. ``hpcgym machines`` lists them, and
:func:`make_machine` builds one by name, or a machine from a TOML/YAML file.

>>> m = make_machine("eurora")
>>> m.n_nodes, m.resources, m.total.tolist()
(64, ('cores', 'gpus', 'mics', 'mem_gb'), [1024, 64, 64, 1024])
>>> sorted(m.groups), m.queues["debug"]
(['gpu', 'mic'], (1800.0, 3600.0))
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources as _resources
from pathlib import Path

from hpcgym.common.registry import Registry
from hpcgym.machine.model import Machine

MACHINES: Registry[Machine] = Registry("machine", usage="(or the path of a .toml file)")
"""Machine presets by name: the files of ``hpcgym/machine/presets`` and any registered later."""


@dataclass(frozen=True)
class MachineSpec:
    """A named machine preset.

    Attributes:
        name: the name :func:`make_machine` accepts (matched case-insensitively).
        factory: builds the machine.
        description: one line for ``hpcgym machines``.
    """

    name: str
    factory: Callable[[], Machine]
    description: str


def register_machine(spec: MachineSpec, *, replace: bool = False) -> None:
    """Make a preset available by name (in :data:`MACHINES`)."""
    MACHINES.register(spec.name, spec.factory, description=spec.description, replace=replace)


def machine_specs() -> dict[str, MachineSpec]:
    """Every registered preset by name."""
    return {name: MachineSpec(name, e.factory, e.description) for name, e in MACHINES.items()}


def make_machine(spec: str | os.PathLike[str] | Machine) -> Machine:
    """A machine by preset name (``hpcgym machines``), from a TOML/YAML file, or as given.

    Raises:
        UnknownNameError: neither a preset name nor an existing file.
        FileNotFoundError: a ``.toml``/``.yaml`` path that does not exist.
    """
    if isinstance(spec, Machine):
        return spec
    key = os.fspath(spec)
    if key in MACHINES:
        return MACHINES.make(key)
    p = Path(key)
    if p.suffix.lower() in (".toml", ".yaml", ".yml") or p.exists():
        if not p.exists():
            raise FileNotFoundError(f"machine file {key!r} does not exist")
        return Machine.from_file(p)
    MACHINES.resolve(key)  # raises the unknown-name error, with the presets and a hint
    raise AssertionError("unreachable")  # pragma: no cover


def _preset_description(path: Path) -> str:
    """The ``description = "..."`` line of a preset file, read without a TOML parser."""
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r'\s*description\s*=\s*"(.*)"\s*$', line)
        if m:
            return m.group(1)
    return path.stem


def _data_machines() -> None:
    """Register the presets of ``hpcgym/machine/presets`` (parsed when first built)."""
    folder = _resources.files("hpcgym.machine").joinpath("presets")
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            path = Path(str(entry))
            factory = functools.partial(Machine.from_file, path)
            register_machine(MachineSpec(path.stem.lower(), factory, _preset_description(path)))


_data_machines()
