"""One exception hierarchy for everything hpcgym raises on purpose."""

from __future__ import annotations


class HpcGymError(Exception):
    """Base class of every error hpcgym raises deliberately."""


class TraceFormatError(HpcGymError, ValueError):
    """A workload file is malformed; the message names the file and the line."""

    def __init__(self, path: str, line: int | None, message: str) -> None:
        self.path = path
        self.line = line
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {message}")


class InvalidConfigError(HpcGymError, ValueError):
    """A configuration value is out of range; the message names the parameter."""


class InvalidDecisionError(HpcGymError, RuntimeError):
    """A dispatcher asked the engine for something impossible (over capacity, double start)."""


class UnknownNameError(HpcGymError, KeyError):
    """A policy, predictor, reward or observation name is not registered."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""
