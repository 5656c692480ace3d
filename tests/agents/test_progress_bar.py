"""Issue 27, point 15: progress bars are drawn only when stderr is a terminal (logs get no redraws)."""

from __future__ import annotations

import io
import sys

import pytest

pytest.importorskip("stable_baselines3")

from hpcgym.agents.callbacks import ProgressBar


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _bar_output(monkeypatch: pytest.MonkeyPatch, stream: io.StringIO) -> str:
    monkeypatch.setattr(sys, "stderr", stream)
    bar = ProgressBar(100)
    bar._on_training_start()
    bar.bar.update(50)
    bar.bar.close()
    return stream.getvalue()


def test_no_bar_in_a_log_file(monkeypatch):
    assert _bar_output(monkeypatch, io.StringIO()) == ""


def test_a_bar_on_a_terminal(monkeypatch):
    assert "training" in _bar_output(monkeypatch, Terminal())
