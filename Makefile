# Every target bootstraps the local virtual environment (.venv) on first use: on a fresh machine
# `make reproduce` and `make test` are all the set-up there is.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
OUT ?= out
PYTEST_ARGS ?=

.PHONY: reproduce test test-fast lint lab dashboard notebooks bench venv chromium clean

# The Jupyter server configuration (jupyter-config/workbench.json: saves go through workbench.notebook_files) is copied
# into the environment: an editable install does not install data files.
JUPYTER_CONF := $(VENV)/etc/jupyter/jupyter_server_config.d/workbench.json

$(STAMP): pyproject.toml constraints.txt jupyter-config/workbench.json
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[test]'
	@mkdir -p $(dir $(JUPYTER_CONF)) && cp jupyter-config/workbench.json $(JUPYTER_CONF)
	@touch $(STAMP)

# The package's bytecode, written before each run: where the environment sets PYTHONDONTWRITEBYTECODE (this machine
# image does), every Python process a run starts (notebook kernels, CLI calls, Dask workers: ~200 in `make test`)
# would compile the package's modules from source again, 0.1-0.15 s each. Python ignores a .pyc whose source changed.
# Not writing it (a read-only checkout, a module that does not compile yet) stops nothing: the run reports the rest.
BYTECODE := $(BIN)/python -m compileall -q workbench || true

venv: $(STAMP)

chromium:
	@bash scripts/ensure-chromium.sh

## make reproduce: all reproductions headless; scoreboard and figures in $(OUT)/
reproduce: venv chromium
	@$(BYTECODE)
	$(BIN)/workbench reproduce --out $(OUT)

## make test: everything: unit, property, reproduction, notebook (nbval) and browser tests
test: venv chromium
	@$(BYTECODE)
	$(BIN)/python -m pytest -n 2 --dist loadfile tests --nbval --nbval-current-env notebooks $(PYTEST_ARGS)

## make test-fast: unit, property and quick-reproduction tests (no slow, browser or notebook tests), for every edit
test-fast: venv
	@$(BYTECODE)
	$(BIN)/python -m pytest -n 2 --dist loadfile -m "not slow and not browser" tests $(PYTEST_ARGS)

## make lint: ruff (lint rules and format check) and mypy over the package
LINT_PATHS := workbench tests benchmarks scripts conftest.py
lint: venv
	$(BIN)/ruff check $(LINT_PATHS) notebooks
	$(BIN)/ruff format --check $(LINT_PATHS)
	$(BIN)/mypy

## make lab [LAB_ARGS="--ip 0.0.0.0 --port 8889 --IdentityProvider.token=..."]: JupyterLab on the notebooks
## (as root it adds --allow-root, which JupyterLab otherwise refuses)
LAB_ARGS ?=
lab: venv
	$(BIN)/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS) notebooks

## make dashboard [PORT=8866]: one Voilà app per paper and a landing page, on 127.0.0.1
PORT ?= 8866
dashboard: venv
	$(BIN)/workbench dashboard --port $(PORT)

## make notebooks [NB=notebooks/00_arrivals.py]: pair each .py with its .ipynb, execute it in place and write it as a
## save from JupyterLab would (workbench.notebook_files: panels as their text, numbers as JavaScript writes them);
## the .py, the source, is touched last: JupyterLab's jupytext refuses a pair whose .ipynb is the newer file
NB ?= $(wildcard notebooks/*.py)
notebooks: venv
	@for py in $(NB); do \
	  echo "executing $$py"; \
	  $(BIN)/jupytext --quiet --to ipynb "$$py" || exit 1; \
	  $(BIN)/jupyter nbconvert --log-level=WARN --to notebook --execute --inplace --ExecutePreprocessor.store_widget_state=False "$${py%.py}.ipynb" || exit 1; \
	  $(BIN)/python -m workbench.notebook_files "$${py%.py}.ipynb" || exit 1; \
	  touch "$$py"; \
	done

## make bench: speed and memory targets, measured vs target
bench: venv
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(OUT) .pytest_cache
