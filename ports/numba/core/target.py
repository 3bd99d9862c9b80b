# What this build is for: the CPU that `make CPU=...` names (Numba compiles for it: the
# wrapper make writes sets NUMBA_CPU_NAME) and the doubles per libmvec call, which the
# Makefile reads off that CPU as it does for the Codon program (VECTOR_WIDTH). Run without
# the wrapper, both are this machine's. Read without importing Numba (--version is quick).
import os


def host_width():
    """The Makefile's VECTOR_WIDTH for CPU=native: 8 with AVX-512F, 4 with AVX2, else 2."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split() for line in f if line.startswith("flags")), [])
    except OSError:
        flags = []
    if os.uname().machine != "x86_64":
        return 1
    return 8 if "avx512f" in flags else 4 if "avx2" in flags else 2


TARGET = os.environ.get("AUTOGRAD_NUMBA_TARGET", "native")
WIDTH = int(os.environ.get("AUTOGRAD_NUMBA_WIDTH", "0")) or host_width()
VECTOR_NAME = {8: "AVX-512F (libmvec _ZGVeN8v)", 4: "AVX2 (libmvec _ZGVdN4v)",
               2: "SSE2 (libmvec _ZGVbN2v)", 1: "scalar (glibc exp/log1p)"}[WIDTH]


def target_text():
    """One line naming the build target and the vector width, as --version prints it."""
    return f"target {TARGET}, vector width {WIDTH} doubles: {VECTOR_NAME}"
