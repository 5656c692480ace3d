"""One exception hierarchy for everything hpcgym raises on purpose, and its warning category."""

from __future__ import annotations


class HpcGymError(Exception):
    """Base class of every error hpcgym raises deliberately."""


class TraceFormatError(HpcGymError, ValueError):
    """An input file (trace, job table, Slurm listing) is malformed; the message names file and line."""

    def __init__(self, path: str, line: int | None, message: str) -> None:
        self.path = path
        self.line = line
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {message}")


class EmptyWorkloadError(HpcGymError, ValueError):
    """There are no jobs to simulate: an empty trace, or every job was dropped or filtered out.

    The message names the file (when there is one) and what was dropped, by reason.
    """


class InvalidConfigError(HpcGymError, ValueError):
    """A configuration value is out of range; the message names the parameter."""


class InvalidDecisionError(HpcGymError, RuntimeError):
    """A dispatcher asked the engine for something impossible (over capacity, double start)."""


class UnknownNameError(HpcGymError, KeyError):
    """A policy, predictor, reward or observation name is not registered."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class MissingExtraError(HpcGymError, ImportError):
    """An optional dependency is not installed; the message names the ``pip install`` that adds it."""


class TrialError(HpcGymError, RuntimeError):
    """A trial of a training sweep failed on Ray Tune; the message names it and its error."""


class ClusterConnectionError(HpcGymError, ConnectionError):
    """A Ray cluster given by address cannot be reached or refuses this process; the message
    names the address, what failed, and the setting that fixes the usual cause."""


class DownloadError(HpcGymError, OSError):
    """A download failed or its content is not what was expected (HTTP error, no network,
    a truncated body, a wrong checksum); the message names what was fetched, from where, and
    why. Nothing of the failed download is left where a later run would use it."""


class MissingTraceError(HpcGymError, FileNotFoundError):
    """A trace named by its catalogue name is not downloaded yet, or the name is not in the
    catalogue; the message names the folder looked in and the command that fetches it."""


class TraceWarning(UserWarning):
    """A trace reads, but something in it deserves a look (odd values, a guessed machine size)."""
