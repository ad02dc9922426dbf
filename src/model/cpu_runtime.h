// Process-wide CPU settings for training and inference with LibTorch.
//
// at::set_num_threads sizes ATen's OpenMP pool (and MKL's, where LibTorch has MKL), but a
// LibTorch linked against OpenBLAS, as Debian's is, leaves OpenBLAS's own pthread pool at one
// thread per core. So `--threads 1` still ran every GEMM on two threads, and with `--threads 2`
// OpenMP's spinning workers and OpenBLAS's sched_yield-polling workers (four threads on two
// cores) pre-empted each other: BERT-Tiny training ran 2-3x slower than with one pool (measured
// on the 2-core CI machine, bench/README.md), and even ATen's pool alone, whose idle
// workers spin, made a GEMM 5x slower with 2 threads than with 1 whenever other processes held
// the cores (model/compute_pool.h). ConfigureCpuRuntime therefore runs ATen and OpenBLAS
// single-threaded and gives the threads to ComputePool, whose workers sleep between jobs and
// which splits the encoder's GEMMs (model/parallel_linear.h). It also keeps freed large blocks in
// the malloc heap: every training step allocates the same multi-megabyte activations, and
// returning them to the kernel after each step cost ~900 page faults (zeroed 4 KiB pages) a step.
//
// Not thread-safe; call once at start-up, before training threads exist.
#pragma once

namespace trainyard::model {

// Gives ComputePool `threads` threads (values < 1 mean 1), sets ATen's intra-op threads and
// OpenBLAS's to 1 (MKL follows ATen's setting by itself) and tunes glibc malloc as above. Returns
// OpenBLAS's thread count afterwards, or 0 when no OpenBLAS is loaded.
int ConfigureCpuRuntime(int threads);

// The CPUs this process may run on (sched_getaffinity; hardware_concurrency where that fails),
// >= 1.
int UsableCpuCount();

}  // namespace trainyard::model
