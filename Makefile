# `make run` and `make test` set up .venv with python3 when absent, install the project
# editable with the extras they need, then act. Stamps make a second call skip the install.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
ARGS   ?=

.PHONY: run test lab bench bench-quick lint clean

# Two makes at once (`make run` and `make test` in a fresh clone) must not build or pip-install into the
# same venv together, so every step that writes .venv holds an exclusive lock on .venv/.lock and re-checks,
# once it has the lock, whether the other make already did the work. fcntl, not flock(1): macOS lacks it.
LOCKED = mkdir -p $(VENV) && $(PYTHON) -c 'import fcntl, subprocess, sys; f = open(sys.argv[1], "w"); \
	fcntl.flock(f, fcntl.LOCK_EX); sys.exit(subprocess.call(sys.argv[2:]))' $(VENV)/.lock sh -c

# The venv's own pip is kept when it is 23 or later (Python 3.11.5's bundles 23.2; upgrading it cost 7 s of a fresh
# `make run`); an older one is upgraded first. pip's check for a newer pip, a request to PyPI on every call, is off.
export PIP_DISABLE_PIP_VERSION_CHECK := 1

# Bytecode, written once under .venv/pycache. Many CI images and containers set PYTHONDONTWRITEBYTECODE=1 (this
# project's CI machine does); with the --no-compile installs below, every kernel of a run then compiled numpy, scipy,
# matplotlib and Jupyter from source again — measured on a fresh venv, a ci-scale notebook took 7.3 s, 4.1 s once its
# imports were compiled, about 3 CPU-s a kernel over the ~100 processes of `make test`. So the venv's processes write
# the bytecode of what they import, once, into the venv (the prefix keeps it out of the clone's own folders).
unexport PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX := $(abspath $(VENV))/pycache
NEW_PIP = $(PY) -c "import pip, sys; sys.exit(int(pip.__version__.partition(chr(46))[0]) < 23)"
$(PY):
	$(LOCKED) 'test -x $(PY) || { $(PYTHON) -m venv $(VENV) && { $(NEW_PIP) || $(PY) -m pip install -q --upgrade pip; }; }'

# One stamp per extras set; pyproject.toml changes re-trigger the install. `make run` installs what executing the
# series needs and no more (JupyterLab alone took a tenth of the install); `make lab` adds JupyterLab on top.
# --no-compile: pip would byte-compile every module of every package (the Jupyter stack is large), about half of
# an install from a warm download cache; Python compiles the few a run imports on first use instead.
$(VENV)/.run-stamp: pyproject.toml | $(PY)
	$(LOCKED) 'test $@ -nt pyproject.toml || { $(PY) -m pip install -q --no-compile -e ".[wordnet,llm,graphdb,notebooks]" && touch $@; }'

$(VENV)/.lab-stamp: $(VENV)/.run-stamp
	$(LOCKED) 'test $@ -nt $(VENV)/.run-stamp || { $(PY) -m pip install -q --no-compile -e ".[wordnet,llm,graphdb,notebooks,lab]" && touch $@; }'

# The actionlint extra is tried after the test extra and may fail (offline, its build cannot fetch actionlint from
# GitHub): the workflow lint test then skips, saying why; on GitHub's runners it fails instead.
NO_ACTIONLINT = make test: the actionlint extra did not install (see $(VENV)/actionlint-install.log); test_workflow skips
$(VENV)/.test-stamp: pyproject.toml | $(PY)
	$(LOCKED) 'test $@ -nt pyproject.toml || { $(PY) -m pip install -q --no-compile -e ".[wordnet,llm,graphdb,graphrag,notebooks,test]" && \
	  { $(PY) -m pip install -q -e ".[actionlint]" > $(VENV)/actionlint-install.log 2>&1 || echo "$(NO_ACTIONLINT)"; } \
	  && touch $@; }'

run: $(VENV)/.run-stamp
	$(PY) -m cookbook run $(ARGS)

# -n auto: a pytest worker per core (pytest-xdist); the session's slow runs (conftest.SharedRuns) start once and
# run beside the tests whatever the number of workers. ARGS="-n 0" runs the tests in one process.
test: $(VENV)/.test-stamp
	$(PY) -m pytest -n auto $(ARGS)

# JupyterLab on notebooks/. The notebooks' kernelspec is "python3" (what Colab expects); JUPYTER_PATH puts
# this venv's python3 kernel ahead of any registered in the user's home, so they run with the project. As root
# (a container, a Colab-like VM) JupyterLab refuses to start without --allow-root, so it is passed then.
lab: $(VENV)/.lab-stamp
	JUPYTER_PATH=$(abspath $(VENV))/share/jupyter $(PY) -m jupyter lab --ServerApp.root_dir=notebooks \
		$(if $(filter 0,$(shell id -u)),--allow-root) $(ARGS)

bench: $(VENV)/.run-stamp
	$(PY) benchmarks/run_all.py $(ARGS)

bench-quick: $(VENV)/.run-stamp
	$(PY) benchmarks/run_all.py --quick $(ARGS)

lint: $(VENV)/.test-stamp
	$(PY) -m ruff check src tests benchmarks

clean:
	rm -rf build .pytest_cache .hypothesis .ruff_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
