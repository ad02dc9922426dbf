// TRAINYARD_MULTIVERSION: compile a hot loop for AVX-512, AVX2 and the baseline ISA and pick one
// at load time (GCC/Clang function multiversioning via ifunc), so the portable x86-64 build still
// runs its elementwise kernels at the machine's vector width. Elsewhere it expands to nothing.
//
// Files with such kernels are compiled with -fno-math-errno (sqrt can vectorise),
// -ffp-contract=off (no FMA contraction, so every variant rounds exactly alike and results do
// not depend on the machine) and, for GCC, the dynamic vectorisation cost model
// (trainyard_vector_kernels() in src/model/CMakeLists.txt).
#pragma once

#if defined(__x86_64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(__CUDACC__) && !defined(TRAINYARD_NO_MULTIVERSION)
#define TRAINYARD_MULTIVERSION __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define TRAINYARD_MULTIVERSION
#endif
