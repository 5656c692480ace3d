"""Workloads: SWF traces, job tables, Slurm accounting logs and generated workloads."""

from __future__ import annotations

from hpcgym.workloads.fit import describe_unplaceable, fit_workload
from hpcgym.workloads.jobtable import (
    DROP_CHUNK,
    DROP_CHUNKS,
    DROP_NO_REQUEST,
    DROP_QUEUE,
    read_jobs,
)
from hpcgym.workloads.jobtable_format import (
    COLUMNS,
    NAME_COLUMNS,
    REQUEST_COLUMNS,
    TABLE_SUFFIXES,
    is_job_table,
)
from hpcgym.workloads.jobtable_write import to_swf_workload, write_jobs
from hpcgym.workloads.logged import log_overcommit, logged_start
from hpcgym.workloads.sacct import (
    DROP_ARRAY_PENDING,
    DROP_CANCELLED,
    DROP_NO_START,
    DROP_PENDING,
    DROP_RUNNING,
    SACCT_COLUMNS,
    SACCT_SUFFIXES,
    is_sacct_log,
    read_sacct,
)
from hpcgym.workloads.swf import (
    DEFAULT_TRACE,
    DROP_NO_SUBMIT,
    DROP_PARTITION,
    DROP_SIZE,
    DROP_ZERO_RUNTIME,
    READINGS,
    check_partitions,
    default_trace_path,
    load_default,
    read_swf,
    trace_name,
    write_swf,
)
from hpcgym.workloads.swf_fields import SWF_FIELDS, USED_FIELDS
from hpcgym.workloads.swf_header import (
    DEFAULT_ESTIMATE_KEY,
    KNOWN_MACHINES,
    MACHINE_SOURCE_KEY,
    known_machine,
    parse_header,
)
from hpcgym.workloads.workload import (
    DROP_NO_RESOURCE,
    DROP_RUNTIME,
    DROP_TOO_LARGE,
    MAX_PROCS,
    LoadReport,
    Workload,
    check_procs,
    real_number,
)

__all__ = [
    "CLASS_NAMES",
    "COLUMNS",
    "DEFAULT_ESTIMATE_KEY",
    "DEFAULT_TRACE",
    "DROP_ARRAY_PENDING",
    "DROP_CANCELLED",
    "DROP_CHUNK",
    "DROP_CHUNKS",
    "DROP_NO_REQUEST",
    "DROP_NO_RESOURCE",
    "DROP_NO_START",
    "DROP_NO_SUBMIT",
    "DROP_PARTITION",
    "DROP_PENDING",
    "DROP_QUEUE",
    "DROP_RUNNING",
    "DROP_RUNTIME",
    "DROP_SIZE",
    "DROP_TOO_LARGE",
    "DROP_ZERO_RUNTIME",
    "KNOWN_MACHINES",
    "MACHINE_SOURCE_KEY",
    "MAX_PROCS",
    "NAME_COLUMNS",
    "READINGS",
    "REQUEST_COLUMNS",
    "SACCT_COLUMNS",
    "SACCT_SUFFIXES",
    "SWF_FIELDS",
    "TABLE_SUFFIXES",
    "USED_FIELDS",
    "EuroraParams",
    "LoadReport",
    "Workload",
    "check_partitions",
    "check_procs",
    "default_trace_path",
    "describe_unplaceable",
    "eurora",
    "fit_workload",
    "is_job_table",
    "is_sacct_log",
    "job_class",
    "known_machine",
    "load_default",
    "log_overcommit",
    "logged_start",
    "parse_header",
    "read_jobs",
    "read_sacct",
    "read_swf",
    "real_number",
    "shares",
    "to_swf_workload",
    "trace_name",
    "write_jobs",
    "write_swf",
]

from hpcgym.workloads.eurora import (
    CLASS_NAMES,
    EuroraParams,
    eurora,
    job_class,
    shares,
)
