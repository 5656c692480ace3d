"""hpcgym: a Gymnasium environment and benchmark suite for HPC job dispatching."""

from __future__ import annotations

from hpcgym.errors import (
    HpcGymError,
    InvalidConfigError,
    InvalidDecisionError,
    TraceFormatError,
    UnknownNameError,
)
from hpcgym.workload import LoadReport, Workload, load_default, read_swf, write_swf

__version__ = "0.1.0"

__all__ = [
    "HpcGymError",
    "InvalidConfigError",
    "InvalidDecisionError",
    "LoadReport",
    "TraceFormatError",
    "UnknownNameError",
    "Workload",
    "__version__",
    "load_default",
    "read_swf",
    "write_swf",
]
