#!/usr/bin/env bash
# Builds the libFuzzer harnesses (fuzz/) with clang-14, ASan and UBSan in build-fuzz/ and runs
# each for a bounded time from its seed corpus; exits non-zero on any finding (the crashing input
# is left in build-fuzz/fuzz-work/<name>/artifacts/). Prints the total fuzzing time.
#   scripts/fuzz.sh              20 s per harness (CI)
#   scripts/fuzz.sh 600 csv      10 minutes on the CSV reader only (ctest -R regex)
# Needs clang and libclang-rt-14-dev (scripts/install-deps.sh --test).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
only=${2:-}
launcher=()
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
# No harness needs LibTorch (clang cannot compile its headers against libstdc++ 12 in C++20), so
# the fuzz build leaves it out. vptr is off: yaml-cpp's types come from an uninstrumented library.
flags="-fsanitize=address,undefined,fuzzer-no-link -fno-sanitize=vptr"
flags+=" -fno-sanitize-recover=undefined -fno-omit-frame-pointer -gline-tables-only"
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_C_COMPILER=clang -DTRAINYARD_FUZZ=ON -DTRAINYARD_FUZZ_SECONDS="$seconds" \
  -DTRAINYARD_WITH_TORCH=OFF "-DCMAKE_CXX_FLAGS=$flags" \
  "${launcher[@]}" >/dev/null
cmake --build build-fuzz -j"$(nproc 2>/dev/null || echo 2)" --target fuzzers
start=$(date +%s)
status=0
# Each harness is one single-threaded process: run them side by side, one per core.
ctest --test-dir build-fuzz -L fuzz --output-on-failure -j"$(nproc 2>/dev/null || echo 2)" \
  ${only:+-R "$only"} || status=$?
echo "fuzz: $(ctest --test-dir build-fuzz -L fuzz -N ${only:+-R "$only"} | tail -1 | tr -d ' ')" \
  "harnesses, ${seconds} s each, $(( $(date +%s) - start )) s in total" >&2
exit $status
