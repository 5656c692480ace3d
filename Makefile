# hpcgym: `make demo` and `make test` work on a fresh machine with only Python 3.11.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test bench lint reproduce clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# The CPU build of torch first: a bare requirement would pull a multi-GB CUDA build.
	$(PY) -m pip install --quiet "torch==2.13.0"
	$(PY) -m pip install --quiet -e ".[rl,plot,dev]"
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m hpcgym demo

test: $(STAMP)
	$(PY) -m pytest -q -n 2 -m "not expensive"

bench: $(STAMP)
	$(PY) -m pytest -q -n 2 -m expensive
	$(PY) benchmarks/run.py
	# EASY on SDSC-SP2 and env steps/s against the commit the golden schedules were recorded at
	$(PY) benchmarks/ab.py --base-from tests/golden/schedules.json --check

lint: $(STAMP)
	$(VENV)/bin/ruff check hpcgym tests benchmarks
	$(VENV)/bin/ruff format --check hpcgym tests benchmarks
	$(VENV)/bin/mypy hpcgym

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
