#include "model/cpu_runtime.h"

#include <dlfcn.h>
#include <sched.h>

#include "model/compute_pool.h"
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <torch/torch.h>

#include <algorithm>
#include <thread>

namespace trainyard::model {

int ConfigureCpuRuntime(int threads) {
  threads = std::max(1, threads);
  torch::set_num_threads(1);
  ComputePool::Get().SetThreads(threads);
  // Looked up rather than linked: a LibTorch with MKL (the CUDA builds) has no OpenBLAS.
  using SetThreads = void (*)(int);
  using GetThreads = int (*)();
  auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  auto get = reinterpret_cast<GetThreads>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  int blas = 0;
  if (set != nullptr) {
    set(1);
    blas = get != nullptr ? get() : 1;
  }
#if defined(__GLIBC__)
  // Blocks up to 32 MiB (glibc's maximum) come from the heap instead of fresh mmaps, and the
  // heap is not trimmed back below 1 GiB of free top space: a step's activations are reused by
  // the next step instead of being faulted in and zeroed again.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
  return blas;
}

int UsableCpuCount() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace trainyard::model
