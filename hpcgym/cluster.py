"""Clusters: what resources a machine has and how jobs are placed on them.

The engine talks to a cluster only through :class:`Cluster`: ``fits``, ``allocate``
and ``release`` of one job. One machine model is implemented, :class:`ProcessorCluster`:
the machine of a Parallel Workloads Archive trace, N interchangeable processor slots of
one resource type. There is no node model yet (nodes with several resource types, such as
the cores, GPUs, MICs and memory of the Eurora machine in Galleguillos et al.): another
model would implement the same interface.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from hpcgym.errors import InvalidConfigError, InvalidDecisionError


class Cluster(ABC):
    """Allocation interface shared by every machine model.

    Attributes:
        resource_names: names of the resource types, e.g. ``("procs",)``.
        capacity: total amount of each resource type, in that order.
    """

    resource_names: tuple[str, ...]
    capacity: np.ndarray

    @abstractmethod
    def reset(self, workload: object) -> None:
        """Empty the machine and read the jobs' requests from ``workload``."""

    @abstractmethod
    def fits(self, job: int) -> bool:
        """Whether ``job`` could start now on the free resources."""

    @abstractmethod
    def allocate(self, job: int) -> None:
        """Place ``job``; raises :class:`InvalidDecisionError` if it does not fit."""

    @abstractmethod
    def release(self, job: int) -> None:
        """Free what ``job`` held."""

    @abstractmethod
    def free(self) -> np.ndarray:
        """Free amount of each resource type."""

    @abstractmethod
    def request(self, job: int) -> np.ndarray:
        """Amount of each resource type ``job`` asks for (summed over nodes)."""


class ProcessorCluster(Cluster):
    """A machine of ``procs`` interchangeable processor slots (SWF traces).

    Args:
        procs: number of processors.

    The hot path reads and writes the integer attribute ``free_procs`` directly.
    """

    resource_names = ("procs",)

    def __init__(self, procs: int) -> None:
        if int(procs) <= 0:
            raise InvalidConfigError(f"procs must be a positive integer, got {procs!r}")
        self.procs = int(procs)
        self.capacity = np.array([self.procs], dtype=np.int64)
        self.free_procs = self.procs
        self._req: np.ndarray = np.zeros(0, dtype=np.int64)
        self._req_list: list[int] = []

    def reset(self, workload: object) -> None:
        self._req = np.asarray(workload.procs_req, dtype=np.int64)  # type: ignore[attr-defined]
        self._req_list = self._req.tolist()
        too_large = self._req > self.procs
        if too_large.any():
            j = int(np.argmax(too_large))
            raise InvalidConfigError(
                f"job {j} asks for {self._req[j]} processors but the machine has {self.procs}; "
                "read the trace with this machine size so such jobs are dropped and counted"
            )
        self.free_procs = self.procs

    def fits(self, job: int) -> bool:
        return self._req_list[job] <= self.free_procs

    def allocate(self, job: int) -> None:
        need = self._req_list[job]
        if need > self.free_procs:
            raise InvalidDecisionError(
                f"job {job} needs {need} processors but only {self.free_procs} of {self.procs} are free"
            )
        self.free_procs -= need

    def release(self, job: int) -> None:
        self.free_procs += self._req_list[job]

    def free(self) -> np.ndarray:
        return np.array([self.free_procs], dtype=np.int64)

    def request(self, job: int) -> np.ndarray:
        return np.array([self._req_list[job]], dtype=np.int64)

    def __repr__(self) -> str:
        return f"ProcessorCluster(procs={self.procs})"
