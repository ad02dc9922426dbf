#!/usr/bin/env bash
# One-shot GPU check of trainyard-bert on an offline CUDA host with PyTorch (its bundled LibTorch),
# no package registry: builds the trainer against the host's torch, then runs timed steps in
# order of priority, each with its own time limit, and writes everything into ONE file,
# OUT/gpu-check.txt (a summary at its end).
#
#   scripts/gpu-check.sh --out DIR [--debs gpu-debs] [--budget 560] [--jobs N] [--dry-run]
#                        [--build-dir DIR] [--python python3]
#
#   --out DIR     where gpu-check.txt goes (the device tool's $OUT)
#   --debs DIR    the .debs of scripts/gpu-debs.sh (run that where apt works; carry the folder);
#                 unpacked with `dpkg -x` into a prefix under the build dir
#   --budget S    seconds from the start for everything; a step gets min(its limit, what is left)
#                 and is skipped when less than 15 s are left (default 560)
#   --dry-run     no GPU: the same steps with tiny sizes on the CPU against whatever LibTorch
#                 the machine has (Debian's, or torch.utils.cmake_prefix_path), the GPU-vs-CPU test
#                 with the CPU in the GPU's place (TRAINYARD_GPU_TEST_DEVICE=cpu)
#
# Steps (issue 29), after the build:
#   a  BERT-Tiny speed at the article's scale (164 k samples replicated from data/sample, batch 128,
#      max_length 100): train_bench, trainyard-bert (fixed padding and length grouping) against
#      bench/train_article_pipeline.py on the same GPU, N steps timed and the epoch extrapolated;
#      training-loop s/epoch (data tokenized in memory first) and end-to-end s/epoch
#   b  GPU vs CPU parity of one step: logits, loss, gradients (train_gpu_test)
#   c  bf16 autocast vs float32 loss curve over 100 steps on CUDA (train_gpu_test)
#   d  BERT-Base shape (12 layers, hidden 768, random weights): samples/s of both pipelines
#   e  checkpoint + resume and predict on CUDA: the trainer's tests (stop/resume bit-identical,
#      SIGTERM -> 143 -> resume, export -> predict) on this build, then the CLI itself
#   f  a full BERT-Tiny epoch of 164 k samples end to end through the CLI (not extrapolated)
# Exit status: 0 when the build and every step that ran passed, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
repo=$(pwd)

out=""
debs=""
budget=560
jobs=$(nproc 2>/dev/null || echo 2)
dry_run=0
build_root=/tmp/trainyard-gpu-check
python=python3
while [[ $# -gt 0 ]]; do
  case $1 in
    --out) out=$2; shift 2 ;;
    --debs) debs=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --dry-run) dry_run=1; shift ;;
    --build-dir) build_root=$2; shift 2 ;;
    --python) python=$2; shift 2 ;;
    -h | --help) sed -n '2,33p' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -n $out ]] || { echo "gpu-check: --out DIR is required" >&2; exit 2; }
mkdir -p "$out" "$build_root"
out=$(realpath "$out")
build_root=$(realpath "$build_root")
[[ -z $debs ]] || debs=$(realpath "$debs")
result=$out/gpu-check.txt
: >"$result"
started=$(date +%s)
deadline=$((started + budget))
failed=0
summary=()

note() { echo "$*" | tee -a "$result" >&2; }

# run_step NAME LIMIT DESCRIPTION -- COMMAND...: runs COMMAND under `timeout` (min(LIMIT, time
# left)), appends its output (long outputs: first 30 and last 150 lines) and its status.
run_step() {
  local name=$1 limit=$2 desc=$3
  shift 4
  local left=$((deadline - $(date +%s)))
  if ((left < 15)); then
    note "== $name: $desc: SKIPPED (${left}s of the budget left) =="
    summary+=("$name  SKIPPED (no time left)  $desc")
    return 0
  fi
  ((limit > left)) && limit=$left
  note "== $name: $desc (limit ${limit}s) =="
  echo "\$ $*" >>"$result"
  local log=$build_root/step-$name.log t0 rc seconds
  t0=$(date +%s.%N)
  timeout -k 10 "$limit" "$@" >"$log" 2>&1
  rc=$?
  seconds=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
  if (($(wc -l <"$log") > 180)); then
    {
      head -30 "$log"
      echo "[... $(($(wc -l <"$log") - 180)) lines left out ...]"
      tail -150 "$log"
    } >>"$result"
  else
    cat "$log" >>"$result"
  fi
  local verdict=passed
  if ((rc == 124 || rc == 137)); then verdict="TIMED OUT"; elif ((rc != 0)); then verdict="FAILED (exit $rc)"; fi
  [[ $verdict == passed ]] || failed=1
  note "== $name: $verdict in ${seconds}s =="
  summary+=("$name  $verdict in ${seconds}s  $desc")
  return "$rc"
}

# ---- the machine ------------------------------------------------------------------------------
export PATH=/usr/local/cuda/bin:$PATH
note "== gpu-check $(date -u +%FT%TZ) on $(hostname), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), dry run: $dry_run =="
{
  echo "cpus: $(nproc), memory: $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
  else
    echo "nvidia-smi: not found"
  fi
  command -v nvcc >/dev/null && nvcc --version | tail -2 | head -1
  "$python" -c 'import torch; print("python torch", torch.__version__, "cuda", torch.version.cuda,
    "available", torch.cuda.is_available(),
    torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")' 2>&1 | tail -1
  cmake --version | head -1
  c++ --version | head -1
} >>"$result" 2>&1

# ---- the build ------------------------------------------------------------------------------
# LibTorch: the Python torch's (a wheel's bundled LibTorch) when it has a CMake package, else the
# system's (Debian's libtorch-dev, found by CMake on its own).
torch_cmake=$("$python" -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null)
torch_include=""
if [[ -n $torch_cmake && -f $torch_cmake/Torch/TorchConfig.cmake ]]; then
  torch_include=$("$python" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "include"))')
else
  torch_cmake=""
fi
if [[ -n $torch_cmake ]]; then note "LibTorch: $torch_cmake"; else note "LibTorch: the system one (Debian libtorch-dev)"; fi

prefix=$build_root/prefix
cxx_flags=""
if [[ -n $debs ]]; then
  rm -rf "$prefix" "$prefix-gloo"
  mkdir -p "$prefix" "$prefix-gloo"
  for deb in "$debs"/*.deb; do
    case $(basename "$deb") in
      libgloo-dev_*) dpkg -x "$deb" "$prefix-gloo" ;;
      *) dpkg -x "$deb" "$prefix" ;;
    esac
  done
  export PKG_CONFIG_LIBDIR=$prefix/usr/lib/x86_64-linux-gnu/pkgconfig:$prefix/usr/share/pkgconfig
  export PKG_CONFIG_SYSROOT_DIR=$prefix
  export LD_LIBRARY_PATH=$prefix/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  # c10d's ProcessGroupGloo.hpp includes Gloo's headers: the wheel's own when it ships them, the
  # system's next to a system LibTorch, else the carried ones (sid's: see gpu-debs.sh).
  if [[ -n $torch_include && ! -f $torch_include/gloo/algorithm.h ]]; then
    cxx_flags="-isystem $prefix-gloo/usr/include"
    gloo_debs=("$debs"/libgloo-dev_*.deb)
    note "Gloo headers: carried ${gloo_debs[0]##*/}"
  else
    note "Gloo headers: $([[ -n $torch_include ]] && echo "the wheel's own" || echo "the system's")"
  fi
  all_debs=("$debs"/*.deb)
  note "dependencies: ${#all_debs[@]} .debs unpacked into $prefix"
fi

build=$build_root/build
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
configure=(cmake -S "$repo" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release
  -DCMAKE_PREFIX_PATH="${torch_cmake:+$torch_cmake;}${debs:+$prefix/usr}")
[[ -n $debs ]] && configure+=(-DPKG_CONFIG_EXECUTABLE="$prefix/usr/bin/pkgconf")
[[ -n $cxx_flags ]] && configure+=(-DCMAKE_CXX_FLAGS="$cxx_flags")
# The wheel's CMake files probe the GPU's architecture unless told.
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
TARGETS=(trainyard-bert train_bench train_gpu_test train_test train_slow_test train_cli_test
  predict_cli_test)
# About 3 minutes with 16 cores; a dry run on a small machine takes what its budget allows.
build_limit=330
[[ $dry_run == 1 ]] && build_limit=$budget
if ! run_step configure 120 "cmake configure" -- "${configure[@]}"; then
  grep -E 'CMake Error|Could NOT|not found' "$build/CMakeFiles/CMakeError.log" 2>/dev/null | head -20 >>"$result"
elif ! run_step build "$build_limit" "build ${TARGETS[*]} (-j$jobs)" -- \
  cmake --build "$build" -j"$jobs" --target "${TARGETS[@]}"; then
  :
fi
if [[ -n $debs && -f $build/CMakeCache.txt ]]; then
  # Where CMake found each dependency: the prefix, not the system (what an offline host has).
  grep -E '^(nlohmann_json_DIR|CLI11_DIR|GTest_DIR|yaml-cpp_DIR|Eigen3_DIR|CSV_INCLUDE_DIR|HTTPLIB_INCLUDE_DIR|SQLite3_INCLUDE_DIR|OPENSSL_INCLUDE_DIR|Torch_DIR|pkgcfg_lib_UTF8PROC_utf8proc):' \
    "$build/CMakeCache.txt" | sed 's/^/found: /' >>"$result"
fi

bin=$build/tools/trainyard-bert
if [[ ! -x $bin || ! -x $build/bench/train_bench ]]; then
  note "== the build failed: no steps run =="
  summary+=("a-f  NOT RUN (no build)")
else
  # ---- the steps, in order of priority --------------------------------------------------------
  threads=$(nproc)
  if [[ $dry_run == 1 ]]; then
    export TRAINYARD_GPU_TEST_DEVICE=cpu
    rows=3000 tiny_steps=5 py_steps=2 base_batch=4 base_steps=5 full_rows=3000 threads=2
  else
    rows=164000 tiny_steps=300 py_steps=40 base_batch=128 base_steps=30 full_rows=164000
  fi
  common=(--csv "$repo/data/sample/uci_sentiment.csv" --vocab "$repo/data/sample/vocab.txt"
    --python "$(command -v "$python")" --threads "$threads" --no-openblas-variant)
  run_step a 150 "BERT-Tiny, batch 128, max_length 100, ${rows} samples: trainyard vs the article's pipeline" -- \
    "$build/bench/train_bench" "${common[@]}" --rows "$rows" --max-steps "$tiny_steps" \
    --python-steps "$py_steps" --python-pretokenized
  run_step b 60 "GPU vs CPU: one step's logits, loss and gradients on the same weights" -- \
    "$build/src/train/train_gpu_test" --gtest_filter='GpuTest.OneStep*'
  run_step c 90 "bf16 autocast vs float32: 100-step loss curves on CUDA" -- \
    "$build/src/train/train_gpu_test" --gtest_filter='GpuTest.Bf16*'
  run_step d 150 "BERT-Base shape (12 x 768, random weights), batch ${base_batch}: both pipelines" -- \
    "$build/bench/train_bench" "${common[@]}" --rows "$rows" --model base --batch-size "$base_batch" \
    --max-steps "$base_steps" --python-steps "$py_steps" --configs fixed,grouping
  run_step e 200 "checkpoint + resume, export + predict on this build's device (the trainer's tests)" -- \
    ctest --test-dir "$build" --output-on-failure -j 4 \
    -R '^(train_test|train_slow_test|train_cli_test|predict_cli_test)$'
  work=$build_root/cli
  rm -rf "$work"
  mkdir -p "$work"
  # The sample replicated to the article's 164 k rows (header once), and 64 rows to validate on.
  awk -v n="$full_rows" 'NR == 1 {print; next} {rows[++k] = $0} END {for (i = 0; i < n; i++) print rows[i % k + 1]}' \
    "$repo/data/sample/uci_sentiment.csv" >"$work/train.csv"
  head -65 "$repo/data/sample/uci_sentiment.csv" >"$work/valid.csv"
  export BIN=$bin WORK=$work VOCAB=$repo/data/sample/vocab.txt
  # shellcheck disable=SC2016 # the single-quoted scripts below are expanded by the inner bash
  train='"$BIN" train --validation-file "$WORK/valid.csv" --vocab "$VOCAB" --text-column text \
    --label-column label --epochs 1 --batch-size 128 --max-length 100'
  # shellcheck disable=SC2016
  run_step e2 60 "the CLI on this device: 20 steps, checkpoint, export, then predict" -- \
    bash -c 'set -e; head -2561 "$WORK/train.csv" >"$WORK/small.csv"
      '"$train"' --training-file "$WORK/small.csv" --checkpoint-dir "$WORK/ckpt" --job-dir "$WORK/model"
      ls "$WORK/ckpt" "$WORK/model"
      "$BIN" predict --model-dir "$WORK/model" --text "a great phone" --text "awful, it broke"'
  # shellcheck disable=SC2016
  run_step f 90 "a full BERT-Tiny epoch of ${full_rows} samples end to end through the CLI (fixed padding to 100, as the article)" -- \
    bash -c 'set -e; start=$(date +%s.%N)
      '"$train"' --training-file "$WORK/train.csv" --no-length-grouping --job-dir "$WORK/full"
      echo "end-to-end wall seconds: $(awk -v a="$start" -v b="$(date +%s.%N)" "BEGIN {print b - a}")"'
fi

{
  echo
  echo "== summary ($(($(date +%s) - started))s of a ${budget}s budget) =="
  printf '%s\n' "${summary[@]}"
} | tee -a "$result" >&2
exit "$failed"
