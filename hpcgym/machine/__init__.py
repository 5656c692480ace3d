"""The machine: nodes x resources, the allocator and the machine presets."""

from __future__ import annotations

from hpcgym.machine.model import (
    MACHINES,
    PBS_NAMES,
    RESOURCE_ALIASES,
    UNPLACEABLE_REASONS,
    Machine,
    MachineSpec,
    align_requests,
    machine_specs,
    make_machine,
    parse_select,
    read_toml_or_yaml,
    register_machine,
)

__all__ = [
    "MACHINES",
    "PBS_NAMES",
    "RESOURCE_ALIASES",
    "UNPLACEABLE_REASONS",
    "Machine",
    "MachineSpec",
    "align_requests",
    "machine_specs",
    "make_machine",
    "parse_select",
    "read_toml_or_yaml",
    "register_machine",
]
