# hpcgym: `make demo` and `make test` work on a fresh machine with only Python 3.11.
# Both share one .venv; each installs what it runs and remembers it in a stamp of its own:
# `make demo` the core package only, `make test` (and bench, lint) every extra.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
PY     := $(VENV)/bin/python
DEMO_STAMP := $(VENV)/.installed-demo
FULL_STAMP := $(VENV)/.installed-all
# Every optional extra of pyproject.toml (rl, plot, dev, ...), read from the file so a new one is included.
EXTRAS = $(shell $(PY) -c "import tomllib; print(','.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']))")

.PHONY: demo test long-test rllib-test bench mutation lint clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# The install compiles hpcgym's native core once (setup.py, hpcgym/common/native.py): it needs a C
# compiler; without one the install goes on and the first run compiles its kernels instead.
NATIVE_NOTE = @command -v cc >/dev/null 2>&1 && echo "hpcgym: installing; the native core compiles once (about a minute)" \
	|| echo "hpcgym: no C compiler (cc): installing without the native core, so the first run compiles kernels (about 30 s)"

$(DEMO_STAMP): pyproject.toml setup.py | $(PY)
	$(NATIVE_NOTE)
	$(PY) -m pip install --quiet -e .
	touch $(DEMO_STAMP)

$(FULL_STAMP): pyproject.toml setup.py | $(PY)
	# The CPU build of torch first: a bare requirement would pull a multi-GB CUDA build.
	$(PY) -m pip install --quiet "torch==2.13.0"
	$(NATIVE_NOTE)
	$(PY) -m pip install --quiet -e ".[$(EXTRAS)]"
	touch $(FULL_STAMP)

demo: $(DEMO_STAMP)
	$(PY) -m hpcgym demo

test: $(FULL_STAMP)
	$(VENV)/bin/lint-imports
	$(PY) -m pytest -q -n 2 -m "not expensive"

# Property and differential tests with 10x the examples on workloads of hundreds of jobs
# (the Hypothesis profile "long" of tests/conftest.py); the default profile stays fast.
long-test: $(FULL_STAMP)
	HYPOTHESIS_PROFILE=long $(PY) -m pytest -q -n 2 -m "not expensive" \
		tests/sim/test_properties.py tests/baselines/test_reference.py tests/env/test_env_baselines.py tests/workloads/test_workload.py \
		tests/machine/test_allocator.py tests/machine/test_machine.py tests/workloads/test_generate.py

# The env under Ray RLlib, in a venv of its own: ray[rllib] pins its own Gymnasium release,
# so it is not one of the extras `make test` installs (tests/env/test_rllib.py skips there).
RLLIB_VENV := .venv-rllib
rllib-test:
	test -x $(RLLIB_VENV)/bin/python || $(PYTHON) -m venv $(RLLIB_VENV)
	$(RLLIB_VENV)/bin/python -m pip install --quiet "torch==2.13.0"
	$(RLLIB_VENV)/bin/python -m pip install --quiet "ray[rllib]>=2.40" pytest hypothesis -e .
	$(RLLIB_VENV)/bin/python -m pytest -q -p no:cacheprovider -o addopts="" tests/env/test_rllib.py

bench: $(FULL_STAMP)
	$(PY) -m pytest -q -n 2 -m expensive
	$(PY) benchmarks/run.py
	# EASY on SDSC-SP2 and env steps/s against the commit the golden schedules were recorded at
	$(PY) benchmarks/ab.py --base-from tests/golden/schedules.json --check

# Mutation testing (Cosmic Ray, the mutation extra) of sim/metrics.py, machine/allocator.py and
# the engine's kernels with numba's JIT off, each module against its own tests only
# (benchmarks/mutation.py). Every mutant is a test run: hours on 2 cores. A seeded sample
# instead: make mutation MUTATION_ARGS="--target metrics --target allocator --sample 40".
mutation: $(FULL_STAMP)
	$(PY) benchmarks/mutation.py $(MUTATION_ARGS)

lint: $(FULL_STAMP)
	$(VENV)/bin/ruff check hpcgym tests benchmarks
	$(VENV)/bin/ruff format --check hpcgym tests benchmarks
	$(VENV)/bin/mypy hpcgym

clean:
	rm -rf $(VENV) $(RLLIB_VENV) build *.egg-info .pytest_cache .hypothesis hpcgym/common/_native_*
