"""The ground floor: errors, the name registry, report tables and optional-extras checks."""

from __future__ import annotations

from hpcgym.common.errors import (
    EmptyWorkloadError,
    HpcGymError,
    InvalidConfigError,
    InvalidDecisionError,
    MissingExtraError,
    TraceFormatError,
    TraceWarning,
    TrialError,
    UnknownNameError,
)

__all__ = [
    "EmptyWorkloadError",
    "HpcGymError",
    "InvalidConfigError",
    "InvalidDecisionError",
    "MissingExtraError",
    "TraceFormatError",
    "TraceWarning",
    "TrialError",
    "UnknownNameError",
]
