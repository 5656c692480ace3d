"""The machine: nodes x resources, what jobs ask of it, the allocator, the machine presets, machine
files, and machines built from Slurm's node listings."""

from __future__ import annotations

from hpcgym.machine.machine_file import machine_toml, write_machine
from hpcgym.machine.model import Machine
from hpcgym.machine.presets import MACHINES, MachineSpec, machine_specs, make_machine, register_machine
from hpcgym.machine.requests import (
    PBS_NAMES,
    RESOURCE_ALIASES,
    UNPLACEABLE_REASONS,
    align_requests,
    parse_select,
    unique_ints,
    unique_rows,
)
from hpcgym.machine.slurm import (
    SINFO_FORMAT,
    SlurmMachine,
    SlurmNode,
    SlurmPartition,
    machine_from_slurm,
    read_slurm_nodes,
    read_slurm_partitions,
    slurm_machine_file,
)
from hpcgym.machine.slurm_values import compress_hostlist, expand_hostlist, parse_gres, parse_slurm_time

__all__ = [
    "BEST_FIT",
    "FIRST_FIT",
    "MACHINES",
    "PBS_NAMES",
    "POLICIES",
    "RESOURCE_ALIASES",
    "SINFO_FORMAT",
    "UNPLACEABLE_REASONS",
    "Machine",
    "MachineSpec",
    "Nodes",
    "SlurmMachine",
    "SlurmNode",
    "SlurmPartition",
    "align_requests",
    "allocate",
    "any_fits",
    "best_fit_weights",
    "compress_hostlist",
    "expand_hostlist",
    "fits",
    "give",
    "machine_from_slurm",
    "machine_specs",
    "machine_toml",
    "make_machine",
    "parse_gres",
    "parse_select",
    "parse_slurm_time",
    "place",
    "read_slurm_nodes",
    "read_slurm_partitions",
    "register_machine",
    "slurm_machine_file",
    "take",
    "take_checked",
    "unique_ints",
    "unique_rows",
    "write_machine",
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
