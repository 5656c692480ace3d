"""Where each parameter of the synthetic Eurora generator comes from: 001, 002, or an assumption.

001 (Galleguillos et al. 2017) and 002 (Galleguillos et al. 2019) publish few figures of
the Eurora workload: the duration classes (001: 93.15 % short < 1 h, 6.82 % medium
1-12 h, 0.03 % long > 12 h, maximum 24 h; 002: 6.10 % 1-5 h, 0.75 % over 5 h), the CPU
time by class (001: 10.77 / 87.63 / 1.6 %), the predictors' errors (001: MAE 38.9 min
for D, 225.1 min for wall-time; 002 Fig. 1, their accuracy), the temporal locality of a
profile's durations and names (001 section 3), users' habit of asking for the queue's
maximum wall-time (002 section 2), and that Eurora had **four queues** (002 section 5),
without naming them. Everything else the generator needs, queue names and shares,
requests, accelerators, memory, arrivals and users, is in neither paper: those values
are assumptions, each with its reason below. The queue, node, core, GPU/MIC and arrival
figures follow hpcgym's own issue 10, a characterisation of Eurora that cites neither
paper for them; they are assumptions here, not calibrations.

:data:`SOURCES` maps every field of :class:`~hpcgym.workloads.eurora.EuroraParams` to
``(source, reason)``; ``source`` is one of :data:`SOURCE_KINDS`. ``hpcgym generate
--help`` lists the fields by source, and ``tests/workloads/test_eurora_sources.py`` checks
that every field has one.
"""

from __future__ import annotations

__all__ = ["SOURCES", "SOURCE_KINDS", "fields_by_source"]

SOURCE_KINDS = ("001", "002", "001, 002", "assumption")
"""``001`` / ``002``: the value is a figure of that paper (or derived from one);
``assumption``: no figure in either paper, the value chosen for the reason given."""

_ISSUE10 = "hpcgym issue 10's characterisation, no figure in 001 or 002"

SOURCES: dict[str, tuple[str, str]] = {
    "queues": (
        "assumption",
        "neither paper names Eurora's queues, and 002 says there were four; these five are the "
        "Eurora machine preset's (their maximum wall-times bound run times and requests, and "
        "PRB and the CP dispatchers read their expected waits), taken from " + _ISSUE10 + ". "
        "Which four 002 counts is not known, so none is dropped (dropping one would change "
        "every generated workload); longpar holds 0.2 % of the generated jobs, reservation 6 %",
    ),
    "queue_shares": ("assumption", "49.8 / 41 / 6 / 3 / 0.2 %: " + _ISSUE10),
    "class_mix": (
        "001, 002",
        "overall 93.15 / 6.10 / 0.72 / 0.03 % (001's and 002's classes at once); how the "
        "classes are split over the queues is an assumption, each class only in queues whose "
        "maximum wall-time allows it",
    ),
    "class_bounds_s": ("001, 002", "001: short < 1 h, long > 12 h, maximum 24 h; 002: the 5 h edge"),
    "level_alpha": (
        "assumption",
        "the shape within each class is not published (001 Fig. 1 shows long tails); chosen so "
        "that short jobs dominate by count and medium jobs by CPU time. 001's CPU-time shares "
        "(10.77 / 87.63 / 1.6 %) are not met: 3.1 / 96.0 / 0.8 % (docs/WORKLOADS.md measures why)",
    ),
    "short_level_min_s": ("assumption", "the shortest level of a short profile; not published"),
    "noise_sigma": (
        "002",
        "tuned so the data-driven predictor is within 25 % of the run time for about half the "
        "jobs, as read off 002 Fig. 1 (its accuracy distribution)",
    ),
    "session_mean_jobs": (
        "assumption",
        "sessions are not published; with these the median inter-arrival is 0 s",
    ),
    "same_second": ("assumption", "bursts giving a median inter-arrival of 0 s: " + _ISSUE10),
    "session_gap_s": ("assumption", "not published"),
    "mean_interarrival_s": (
        "assumption",
        "30 s, half the 60 s of " + _ISSUE10 + ": the papers call Eurora's workload heavy, and at "
        "60 s few generated jobs wait",
    ),
    "users": ("assumption", "not published"),
    "user_zipf": ("assumption", "not published: a few users submit most profiles"),
    "groups": ("assumption", "not published"),
    "new_profile": ("001", "tuned with shift to the data-driven predictor's MAE (001: 38.9 min)"),
    "reuse_lag_mean": ("assumption", "not published: recent profiles come back"),
    "shift": (
        "001",
        "001 section 3: a profile's durations are stable for long periods, then change to a new "
        "set; the rate is tuned to D's MAE",
    ),
    "rename_on_shift": ("assumption", "001 names the habit (job1, job2), not its rate"),
    "resize_on_shift": (
        "assumption",
        "001's rule 3 allows resources to differ for one name; the rate is not published",
    ),
    "request_shape": ("assumption", "62 % one core, 95 % one node: " + _ISSUE10),
    "request_shape_longer": (
        "assumption",
        "not published: longer jobs ask for more, so that medium jobs carry most of the CPU time "
        "(001) and the machine fills",
    ),
    "accelerator": ("assumption", "about 15 % GPUs, under 1 % MICs: " + _ISSUE10),
    "cores_choices": ("assumption", "not published"),
    "cores_weights": ("assumption", "not published"),
    "node_cores_choices": ("assumption", "not published"),
    "node_cores_weights": ("assumption", "not published"),
    "chunks_choices": ("assumption", "not published; at most 8, so GPU and MIC jobs fit their 32 nodes"),
    "chunks_weights": ("assumption", "not published"),
    "accelerators_two": ("assumption", "not published"),
    "mem_per_core_gb": ("001, 002", "a node's 16 GB over its 16 cores (the machine both papers describe)"),
    "mem_sigma": ("assumption", "memory proportional to cores with noise: " + _ISSUE10),
    "default_walltime": (
        "002",
        "users tend to use the queue's maximum wall-time (002 section 2); the share is tuned to "
        "wall-time's large MAE (001: 225 min)",
    ),
    "walltime_factor": ("assumption", "not published"),
}
"""Every :class:`~hpcgym.workloads.eurora.EuroraParams` field -> ``(source, reason)``."""


def fields_by_source() -> dict[str, list[str]]:
    """The parameters grouped by :data:`SOURCE_KINDS`, in the order of :data:`SOURCES`.

    >>> "queue_shares" in fields_by_source()["assumption"]
    True
    """
    out: dict[str, list[str]] = {k: [] for k in SOURCE_KINDS}
    for name, (kind, _) in SOURCES.items():
        out[kind].append(name)
    return out
