"""The machine: nodes x resources, what jobs ask of it, the allocator and the machine presets."""

from __future__ import annotations

from hpcgym.machine.model import Machine
from hpcgym.machine.presets import MACHINES, MachineSpec, machine_specs, make_machine, register_machine
from hpcgym.machine.requests import (
    PBS_NAMES,
    RESOURCE_ALIASES,
    UNPLACEABLE_REASONS,
    align_requests,
    parse_select,
    unique_rows,
)

__all__ = [
    "BEST_FIT",
    "FIRST_FIT",
    "MACHINES",
    "PBS_NAMES",
    "POLICIES",
    "RESOURCE_ALIASES",
    "UNPLACEABLE_REASONS",
    "Machine",
    "MachineSpec",
    "Nodes",
    "align_requests",
    "allocate",
    "any_fits",
    "best_fit_weights",
    "fits",
    "give",
    "machine_specs",
    "make_machine",
    "parse_select",
    "place",
    "register_machine",
    "take",
    "take_checked",
    "unique_rows",
]

from hpcgym.machine.allocator import (
    BEST_FIT,
    FIRST_FIT,
    POLICIES,
    Nodes,
    allocate,
    any_fits,
    best_fit_weights,
    fits,
    give,
    place,
    take,
    take_checked,
)
