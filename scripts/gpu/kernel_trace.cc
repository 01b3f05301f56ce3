// Kernel timeline without Nsight Systems (the GPU machine has Nsight Compute but not nsys): a CUDA injection library
// that records every kernel's GPU start and end, stream, grid size and demangled name through CUPTI's activity API
// (graph kernel nodes included: a replayed graph's kernels appear one by one) into $TRACE_OUT (TSV), for
// scripts/gpu/kernel_trace.py. No dacpp code is involved; it attaches to any CUDA process:
//   g++ -O2 -shared -fPIC -o libkernel_trace.so scripts/gpu/kernel_trace.cc -I/usr/local/cuda/include
//       -L/usr/local/cuda/lib64 -lcupti          (here; the GPU machine has libcupti in /usr/local/cuda/lib64)
//   CUDA_INJECTION64_PATH=$PWD/libkernel_trace.so TRACE_OUT=/tmp/trace.tsv dacpp bench ... --runs 3 --warmup 1
//   python3 scripts/gpu/kernel_trace.py /tmp/trace.tsv forward.txt
// Records arrive in buffers CUPTI hands back when full and at the process's exit (flushed by an atexit handler).
#include <cupti.h>
#include <cxxabi.h>

#include <cstdio>
#include <cstdlib>

namespace {

FILE* g_out = nullptr;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = size_t{16} << 20;
  *buffer = static_cast<uint8_t*>(aligned_alloc(8, *size));
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  while (g_out != nullptr && cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) continue;
    const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
    int status = 0;
    char* demangled = abi::__cxa_demangle(k->name, nullptr, nullptr, &status);
    std::fprintf(g_out, "%llu\t%llu\t%u\t%u\t%d\t%s\n", static_cast<unsigned long long>(k->start),
                 static_cast<unsigned long long>(k->end), k->streamId, k->gridX * k->gridY * k->gridZ,
                 k->blockX * k->blockY * k->blockZ, status == 0 && demangled ? demangled : k->name);
    std::free(demangled);
  }
  std::free(buffer);
}

void finish() {
  cuptiActivityFlushAll(1);
  if (g_out != nullptr) std::fclose(g_out);
  g_out = nullptr;
}

}  // namespace

// Called by the CUDA driver when it loads the library named by CUDA_INJECTION64_PATH.
extern "C" int InitializeInjection() {
  const char* path = std::getenv("TRACE_OUT");
  g_out = std::fopen(path != nullptr ? path : "/tmp/kernel_trace.tsv", "w");
  if (g_out == nullptr) return 0;
  if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS ||
      cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
    std::fprintf(stderr, "kernel_trace: CUPTI refused the activity callbacks; no trace\n");
    return 0;
  }
  std::atexit(finish);
  return 1;
}
