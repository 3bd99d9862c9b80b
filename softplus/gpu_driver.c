/* The CUDA driver for level v5, loaded at run time: the seq_nvptx_* functions that Codon 0.19.3's
 * @gpu.kernel code calls (its wheel's runtime is built without them), over dlopen("libcuda.so.1").
 * It declares the few driver types it uses itself, so the build needs no CUDA headers or toolkit, and a
 * binary linked with it starts and runs every other level on a machine with no driver.
 *
 * Codon calls seq_nvptx_load_module(<the PTX path baked in at build time>) as the program starts; this
 * file only records the path there. The driver is opened by autograd_gpu_open(), which v5 calls before its
 * timed region, and which looks for the PTX beside the executable first (<executable>.ptx, which make
 * writes), then at the baked path, so a binary moved together with its .ptx keeps working. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <unistd.h>

typedef int CUresult;                 /* CUDA_SUCCESS is 0 */
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef unsigned long long CUdeviceptr;

/* Codon's str, passed by value: its length, then its bytes (not NUL-terminated). */
typedef struct { int64_t len; const char *ptr; } codon_str;

/* The driver entry points, by the names libcuda.so.1 exports (the _v2 ones are what cuda.h's macros
 * select for 64-bit device pointers). */
static struct {
  CUresult (*Init)(unsigned);
  CUresult (*DeviceGetCount)(int *);
  CUresult (*DeviceGet)(CUdevice *, int);
  CUresult (*DeviceGetName)(char *, int, CUdevice);
  CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*CtxSetCurrent)(CUcontext);
  CUresult (*CtxSynchronize)(void);
  CUresult (*ModuleLoad)(CUmodule *, const char *);
  CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                           unsigned, CUstream, void **, void **);
  CUresult (*MemAlloc)(CUdeviceptr *, size_t);
  CUresult (*MemFree)(CUdeviceptr);
  CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*GetErrorName)(CUresult, const char **);
} cu;

static const char *baked_ptx = NULL;  /* from seq_nvptx_load_module */
static CUmodule module = NULL;
static char device_name[256];

/* A driver call that fails after the device was opened (a launch, a copy) ends the program with one
 * error line: there is no result to print. */
static void check(CUresult r, const char *call) {
  if (r == 0) return;
  const char *name = NULL;
  if (cu.GetErrorName == NULL || cu.GetErrorName(r, &name) != 0 || name == NULL) name = "unknown error";
  fflush(stdout);
  fprintf(stderr, "error: --level v5: %s failed: %s (%d)\n", call, name, r);
  exit(1);
}

static int fail(char *err, size_t cap, const char *what, const char *call, CUresult r) {
  const char *name = NULL;
  if (cu.GetErrorName == NULL || cu.GetErrorName(r, &name) != 0 || name == NULL) name = "unknown error";
  snprintf(err, cap, "%s (%s: %s)", what, call, name);
  return 0;
}

/* dlsym with the driver's name for the entry point; 0 when it is missing. */
#define FIND(field, symbol) (*(void **)&cu.field = dlsym(lib, symbol)) != NULL

/* Opens the driver, device 0, its primary context and the kernel's module. Returns 1, or 0 with a
 * one-line reason in err. Idempotent. */
int autograd_gpu_open(char *err, int64_t cap) {
  if (module != NULL) return 1;
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    const char *why = dlerror();
    snprintf(err, cap, "no CUDA driver (%s)", why != NULL ? why : "libcuda.so.1 not found");
    return 0;
  }
  if (!(FIND(Init, "cuInit") && FIND(DeviceGetCount, "cuDeviceGetCount") && FIND(DeviceGet, "cuDeviceGet") &&
        FIND(DeviceGetName, "cuDeviceGetName") && FIND(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain") &&
        FIND(CtxSetCurrent, "cuCtxSetCurrent") && FIND(CtxSynchronize, "cuCtxSynchronize") &&
        FIND(ModuleLoad, "cuModuleLoad") && FIND(ModuleGetFunction, "cuModuleGetFunction") &&
        FIND(LaunchKernel, "cuLaunchKernel") && FIND(MemAlloc, "cuMemAlloc_v2") &&
        FIND(MemFree, "cuMemFree_v2") && FIND(MemcpyHtoD, "cuMemcpyHtoD_v2") &&
        FIND(MemcpyDtoH, "cuMemcpyDtoH_v2") && FIND(GetErrorName, "cuGetErrorName"))) {
    snprintf(err, cap, "the CUDA driver libcuda.so.1 lacks an entry point v5 needs");
    return 0;
  }
  CUresult r = cu.Init(0);
  if (r != 0) return fail(err, cap, "no usable CUDA device", "cuInit", r);
  int count = 0;
  r = cu.DeviceGetCount(&count);
  if (r != 0) return fail(err, cap, "no usable CUDA device", "cuDeviceGetCount", r);
  if (count < 1) {
    snprintf(err, cap, "no CUDA device (the driver found none)");
    return 0;
  }
  CUdevice device;
  CUcontext context;
  if ((r = cu.DeviceGet(&device, 0)) != 0) return fail(err, cap, "no usable CUDA device", "cuDeviceGet", r);
  if ((r = cu.DeviceGetName(device_name, sizeof device_name - 1, device)) != 0) strcpy(device_name, "?");
  if ((r = cu.DevicePrimaryCtxRetain(&context, device)) != 0)
    return fail(err, cap, "no usable CUDA device", "cuDevicePrimaryCtxRetain", r);
  if ((r = cu.CtxSetCurrent(context)) != 0) return fail(err, cap, "no usable CUDA device", "cuCtxSetCurrent", r);

  /* The PTX: <executable>.ptx first, then the path Codon baked in at build time. */
  char beside[4096];
  ssize_t n = readlink("/proc/self/exe", beside, sizeof beside - 8);
  const char *paths[2] = {NULL, baked_ptx};
  if (n > 0) {
    memcpy(beside + n, ".ptx", 5);
    paths[0] = beside;
  }
  for (int i = 0; i < 2; i++) {
    if (paths[i] == NULL || access(paths[i], R_OK) != 0) continue;
    if ((r = cu.ModuleLoad(&module, paths[i])) != 0) {
      module = NULL;
      return fail(err, cap, "the driver cannot load the kernel's PTX", "cuModuleLoad", r);
    }
    return 1;
  }
  snprintf(err, cap, "the kernel's PTX is missing (looked for %s and %s)", paths[0] ? paths[0] : "<executable>.ptx",
           baked_ptx ? baked_ptx : "the build's path");
  return 0;
}

/* The name of the device autograd_gpu_open opened ("" before). */
const char *autograd_gpu_device_name(void) { return device_name; }

/* Waits for the kernels launched so far; a failure inside one is reported here. */
void autograd_gpu_synchronize(void) { check(cu.CtxSynchronize(), "cuCtxSynchronize"); }

/* What Codon's compiled code calls. Only load_module may run before autograd_gpu_open. */
void seq_nvptx_load_module(const char *filename) { baked_ptx = filename; }

void *seq_nvptx_function(codon_str name) {
  /* Codon names kernels by their realized signature; the PTX spells non-identifier characters as '_'. */
  char clean[1024];
  int64_t n = name.len < (int64_t)sizeof clean - 1 ? name.len : (int64_t)sizeof clean - 1;
  for (int64_t i = 0; i < n; i++) {
    char c = name.ptr[i];
    int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (i > 0 && c >= '0' && c <= '9');
    clean[i] = ok ? c : '_';
  }
  clean[n] = '\0';
  if (module == NULL) check(-1, "a kernel launch before the device was opened");
  CUfunction f;
  check(cu.ModuleGetFunction(&f, module, clean), "cuModuleGetFunction");
  return f;
}

void seq_nvptx_invoke(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                      unsigned shared, void **args) {
  check(cu.LaunchKernel((CUfunction)f, gx, gy, gz, bx, by, bz, shared, NULL, args, NULL), "cuLaunchKernel");
}

void *seq_nvptx_device_alloc(int64_t size) {
  CUdeviceptr p = 0;
  if (size > 0) check(cu.MemAlloc(&p, (size_t)size), "cuMemAlloc");
  return (void *)(uintptr_t)p;
}

void seq_nvptx_memcpy_h2d(void *device, const void *host, int64_t size) {
  if (size > 0) check(cu.MemcpyHtoD((CUdeviceptr)(uintptr_t)device, host, (size_t)size), "cuMemcpyHtoD");
}

void seq_nvptx_memcpy_d2h(void *host, void *device, int64_t size) {
  if (size > 0) check(cu.MemcpyDtoH(host, (CUdeviceptr)(uintptr_t)device, (size_t)size), "cuMemcpyDtoH");
}

void seq_nvptx_device_free(void *device) {
  if (device != NULL) check(cu.MemFree((CUdeviceptr)(uintptr_t)device), "cuMemFree");
}

/* libdevice's log1p, which v5's kernel calls by name (Codon 0.19.3 maps math.exp to libdevice but leaves
 * math.log1p to the C library, which a kernel cannot call). On the device libdevice defines it; this is the
 * host's definition, for the CPU copy of the same code that the tests run: the C library's log1p. */
double __nv_log1p(double x) { return log1p(x); }
