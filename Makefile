# `make run` and `make test` set up .venv with python3 when absent, install the project
# editable with the extras they need, then act. Stamps make a second call skip the install.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
ARGS   ?=

.PHONY: run test bench bench-quick lint clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

# One stamp per extras set; pyproject.toml changes re-trigger the install.
$(VENV)/.run-stamp: pyproject.toml | $(PY)
	$(PY) -m pip install -q -e '.[wordnet,llm]'
	touch $@

$(VENV)/.test-stamp: pyproject.toml | $(PY)
	$(PY) -m pip install -q -e '.[wordnet,llm,test]'
	touch $@

run: $(VENV)/.run-stamp
	$(PY) -m cookbook run $(ARGS)

test: $(VENV)/.test-stamp
	$(PY) -m pytest $(ARGS)

bench: $(VENV)/.run-stamp
	$(PY) benchmarks/run_all.py $(ARGS)

bench-quick: $(VENV)/.run-stamp
	$(PY) benchmarks/run_all.py --quick $(ARGS)

lint: $(VENV)/.test-stamp
	$(PY) -m ruff check src tests benchmarks

clean:
	rm -rf build .pytest_cache .hypothesis .ruff_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
