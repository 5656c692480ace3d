"""The ``rgb_array`` picture of the dispatch environment, drawn with numpy alone.

One fixed-size frame (:data:`FRAME_SHAPE`, so vector envs can tile frames) shows, top to
bottom:

* the **machine**: one bar over the machine's processors. Free processors are white and
  come first (at the left); then the running jobs, each a segment as wide as its
  processors, ordered by predicted end (the next to end next to the free ones) and
  coloured by their remaining predicted time; a job past its prediction is red.
* the **queue**: one row per waiting job in arrival order (row ``i`` is the job in
  action slot ``i``), up to :data:`QUEUE_ROWS` rows. The bar's length is the job's
  processors on the machine bar's scale and its colour its predicted run time, so a job
  fits now exactly when its bar ends left of the dotted line (the free processors); the
  square left of the bar is green then.
* two gauges: the queue's length (as a share of the episode's jobs) and the episode's
  progress (jobs ended).

Durations map to colours on a log scale, ``log(1 + t) / log(1 + max_time_s)``: yellow for
seconds, through green and blue, to dark purple at ``max_time_s`` (a week by default).

>>> frame = render_frame(
...     now=0.0, machine_procs=8, free_procs=2, running=np.array([0]), queue=np.array([1, 2]),
...     procs=np.array([6, 4, 1]), start=np.array([0.0, np.nan, np.nan]),
...     prediction=np.array([60.0, 3600.0, 30.0]), max_time_s=86400.0, done_fraction=0.0,
...     queue_fraction=2 / 3,
... )
>>> frame.shape, frame.dtype
((176, 256, 3), dtype('uint8'))
"""

from __future__ import annotations

import numpy as np

FRAME_SHAPE = (176, 256, 3)
"""Height, width and channels of every frame."""

QUEUE_ROWS = 16
"""Waiting jobs shown (the first action slots)."""

# x layout: a 5-px marker column, then the bars on a common processor scale
_MARK0, _MARK1 = 4, 9
_X0, _X1 = 10, FRAME_SHAPE[1] - 4
# y layout
_MACHINE = (4, 28)
_QUEUE0, _ROW, _ROW_GAP = 34, 7, 1
_QUEUE_GAUGE = (_QUEUE0 + QUEUE_ROWS * (_ROW + _ROW_GAP) + 2, _QUEUE0 + QUEUE_ROWS * (_ROW + _ROW_GAP) + 5)
_DONE_GAUGE = (_QUEUE_GAUGE[1] + 3, _QUEUE_GAUGE[1] + 6)

BACKGROUND = np.array([236, 236, 236], np.uint8)
FREE = np.array([255, 255, 255], np.uint8)
OVERDUE = np.array([214, 39, 40], np.uint8)
FITS = np.array([44, 160, 44], np.uint8)
NO_FIT = np.array([190, 190, 190], np.uint8)
LINE = np.array([60, 60, 60], np.uint8)
QUEUE_GAUGE = np.array([31, 119, 180], np.uint8)
DONE_GAUGE = np.array([90, 90, 90], np.uint8)

# viridis at 0, 1/4, 1/2, 3/4, 1, reversed: short durations bright, long ones dark
_ANCHORS = np.array(
    [[253, 231, 37], [94, 201, 98], [33, 145, 140], [59, 82, 139], [68, 1, 84]], dtype=np.float64
)


def duration_colours(seconds: np.ndarray, max_time_s: float) -> np.ndarray:
    """RGB colours (n, 3) of durations on the log scale described in the module docstring.

    >>> duration_colours(np.array([0.0, 86400.0, 1e9]), 86400.0).tolist()
    [[253, 231, 37], [68, 1, 84], [68, 1, 84]]
    """
    t = np.nan_to_num(np.asarray(seconds, dtype=np.float64), nan=0.0, posinf=max_time_s)
    v = np.clip(np.log1p(np.maximum(t, 0.0)) / np.log1p(max_time_s), 0.0, 1.0)
    pos = v * (len(_ANCHORS) - 1)
    lo = np.minimum(pos.astype(np.int64), len(_ANCHORS) - 2)
    frac = (pos - lo)[:, None]
    rgb = _ANCHORS[lo] * (1.0 - frac) + _ANCHORS[lo + 1] * frac
    return np.rint(rgb).astype(np.uint8)  # type: ignore[no-any-return]


def render_frame(
    *,
    now: float,
    machine_procs: int,
    free_procs: int,
    running: np.ndarray,
    queue: np.ndarray,
    procs: np.ndarray,
    start: np.ndarray,
    prediction: np.ndarray,
    max_time_s: float,
    done_fraction: float,
    queue_fraction: float,
) -> np.ndarray:
    """The frame of one system state (see the module docstring for what it shows).

    Args:
        now: current time (s).
        machine_procs: processors of the machine.
        free_procs: processors free now.
        running, queue: job indices of the running jobs and of the waiting ones (arrival
            order).
        procs, start, prediction: job columns (requested processors, start time, current
            predicted run time), indexed by job.
        max_time_s: the duration drawn darkest.
        done_fraction: share of the episode's jobs that have ended, in [0, 1].
        queue_fraction: waiting jobs as a share of the episode's jobs, in [0, 1].

    Returns:
        A ``uint8`` array of shape :data:`FRAME_SHAPE`.
    """
    frame = np.empty(FRAME_SHAPE, np.uint8)
    frame[:] = BACKGROUND
    width = _X1 - _X0
    scale = width / max(int(machine_procs), 1)

    # the machine: free processors first, then running jobs by predicted end
    y0, y1 = _MACHINE
    bar = np.empty((width, 3), np.uint8)
    bar[:] = FREE
    if len(running):
        remaining = start[running] + prediction[running] - now
        order = np.argsort(remaining, kind="stable")
        remaining = remaining[order]
        edges = np.rint((free_procs + np.cumsum(procs[running][order])) * scale).astype(np.int64)
        first = int(np.rint(free_procs * scale))
        cols = np.arange(first, min(int(edges[-1]), width))
        owner = np.searchsorted(edges, cols, side="right")  # which running job covers a column
        colours = duration_colours(remaining, max_time_s)
        colours[remaining < 0] = OVERDUE
        bar[cols] = colours[owner]
        starts = np.concatenate(([first], edges[:-1]))
        seg = starts[(edges - starts >= 3) & (starts < width)]
        bar[seg] = (bar[seg] * 0.6).astype(np.uint8)  # a darker first column tells jobs apart
    frame[y0:y1, _X0:_X1] = bar
    frame[y0 - 1, _X0 - 1 : _X1 + 1] = frame[y1, _X0 - 1 : _X1 + 1] = LINE
    frame[y0 - 1 : y1 + 1, _X0 - 1] = frame[y0 - 1 : y1 + 1, _X1] = LINE

    # the queue: the first waiting jobs, one row each
    shown = queue[:QUEUE_ROWS]
    if len(shown):
        length = np.clip(np.rint(procs[shown] * scale).astype(np.int64), 1, width)
        colours = duration_colours(prediction[shown], max_time_s)
        fits = procs[shown] <= free_procs
        for row, (n, colour, fit) in enumerate(zip(length, colours, fits, strict=True)):
            top = _QUEUE0 + row * (_ROW + _ROW_GAP)
            frame[top : top + _ROW, _X0 : _X0 + n] = colour
            frame[top + 1 : top + _ROW - 1, _MARK0:_MARK1] = FITS if fit else NO_FIT
    free_x = _X0 + int(np.rint(free_procs * scale))
    bottom = _QUEUE0 + QUEUE_ROWS * (_ROW + _ROW_GAP)
    frame[_QUEUE0:bottom:2, min(free_x, _X1 - 1)] = LINE

    # gauges
    for (g0, g1), share, colour in (
        (_QUEUE_GAUGE, queue_fraction, QUEUE_GAUGE),
        (_DONE_GAUGE, done_fraction, DONE_GAUGE),
    ):
        frame[g0:g1, _X0:_X1] = FREE
        frame[g0:g1, _X0 : _X0 + int(np.rint(np.clip(share, 0.0, 1.0) * width))] = colour
    return frame
