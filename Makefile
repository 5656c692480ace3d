# hpcgym: `make demo` and `make test` work on a fresh machine with only Python 3.11.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test long-test bench lint reproduce clean

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

# Property and differential tests with 10x the examples on workloads of hundreds of jobs
# (the Hypothesis profile "long" of tests/conftest.py); the default profile stays fast.
long-test: $(STAMP)
	HYPOTHESIS_PROFILE=long $(PY) -m pytest -q -n 2 -m "not expensive" \
		tests/test_properties.py tests/test_reference.py tests/test_env_baselines.py tests/test_workload.py

bench: $(STAMP)
	$(PY) -m pytest -q -m expensive
	$(PY) benchmarks/run.py

lint: $(STAMP)
	$(VENV)/bin/ruff check hpcgym tests benchmarks
	$(VENV)/bin/ruff format --check hpcgym tests benchmarks
	$(VENV)/bin/mypy hpcgym

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
