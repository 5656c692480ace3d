"""The ground floor: errors, the name registry, report tables and optional-extras checks."""

from __future__ import annotations

from hpcgym.common.errors import (
    ClusterConnectionError,
    DownloadError,
    EmptyWorkloadError,
    HpcGymError,
    InvalidConfigError,
    InvalidDecisionError,
    MissingExtraError,
    MissingTraceError,
    TraceFormatError,
    TraceWarning,
    TrialError,
    UnknownNameError,
)

__all__ = [
    "ClusterConnectionError",
    "DownloadError",
    "EmptyWorkloadError",
    "HpcGymError",
    "InvalidConfigError",
    "InvalidDecisionError",
    "MissingExtraError",
    "MissingTraceError",
    "TraceFormatError",
    "TraceWarning",
    "TrialError",
    "UnknownNameError",
]
