#!/usr/bin/env bash
# Builds and tests the trainer (src/model, src/train, src/distributed, src/text, src/data,
# tools/trainyard_bert) against LibTorch 2.x: Debian 13 (trixie)'s libtorch-dev 2.6, in a
# `debootstrap trixie` root, with this checkout bind-mounted read-only at /src/trainyard. CI stays on
# Debian 12's LibTorch 1.13; this script is not part of CI. Needs root, debootstrap and Debian's
# mirror (the one apt uses here, or DEBIAN_MIRROR). No GPU.
#
#   scripts/libtorch2-check.sh [--root DIR] [--jobs N] [--no-tests] [--bench [HOST_BUILD_DIR]]
#                              [--ctest-regex RE] [--lock FILE]
#
#   --root DIR   the trixie root (default: $TRAINYARD_TRIXIE_ROOT or /var/tmp/trainyard-trixie);
#                made on the first run (~5 minutes), reused after. Its build tree is DIR/build.
#   --bench      afterwards, train_bench under LibTorch 1.13 (HOST_BUILD_DIR, default build/, with
#                Debian 12's python3-torch) and under 2.6 (the root, with trixie's python3-torch),
#                back to back, each with the article's Python pipeline; prints both JSON lines.
#   --ctest-regex RE   which tests to run (default: the trainer's, see TESTS below).
#   --lock FILE  hold FILE (flock) while building, testing and benchmarking, not while the root is
#                made: on a shared machine, other builds that take the same lock wait meanwhile.
#
# Prints a summary: LibTorch version, build time, ctest's passed/failed counts. Exit status 0 only
# when the build and every selected test pass. Wrap it in flock on a shared build machine.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

root=${TRAINYARD_TRIXIE_ROOT:-/var/tmp/trainyard-trixie}
jobs=$(nproc 2>/dev/null || echo 2)
run_tests=1
bench=0
host_build=$repo/build
lock=""
# The trainer's tests: model, train, distributed, text, data and the trainyard-bert CLI tests.
TESTS='^(model_test|model_parity_test|train_test|train_step_parity_test|train_slow_test|train_core_test|train_gpu_test|distributed_test|distributed_multiprocess_test|text_test|text_oracle_fuzz|data_test|make_splits_cli_test|predict_cli_test|predict_parity_cli_test|tokenize_cli_test|train_cli_test|train_distributed_cli_test)$'
while [[ $# -gt 0 ]]; do
  case $1 in
    --root) root=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --no-tests) run_tests=0; shift ;;
    --ctest-regex) TESTS=$2; shift 2 ;;
    --lock) lock=$2; shift 2 ;;
    --bench)
      bench=1; shift
      if [[ $# -gt 0 && $1 != --* ]]; then host_build=$(realpath "$1"); shift; fi ;;
    -h | --help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "libtorch2-check: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

die() {
  echo "libtorch2-check: error: $*" >&2
  exit 1
}
log() { echo "libtorch2-check: $*" >&2; }

[[ $(id -u) == 0 ]] || die "needs root (debootstrap, chroot, bind mounts)"
command -v debootstrap >/dev/null || die "debootstrap is not installed (apt-get install debootstrap)"
[[ -s data/sample/vocab.txt ]] || die "data/sample is missing: run scripts/fetch-sample-data.sh first"
[[ $root == /* ]] || root=$(realpath -m "$root")
case $root/ in "$repo"/*) die "--root $root is inside the checkout; put it outside" ;; esac

# scripts/install-deps.sh's build list (and its --test list's python3-torch reference), by their
# trixie names, plus ccache so reruns are quick.
PACKAGES=(
  build-essential cmake pkg-config git ca-certificates ccache
  libtorch-dev libopenblas-dev libgloo-dev
  libsqlite3-dev nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libcpp-httplib-dev libssl-dev
  libspdlog-dev libfmt-dev libutf8proc-dev libeigen3-dev libcsv-dev
  libgtest-dev libgmock-dev
  python3 python3-torch python3-numpy procps
)

# Mounts are undone on every exit; a run killed half-way leaves them, and the next run's
# cleanup (and this trap) unmounts anything under the root first.
unmount_all() {
  awk -v r="$root/" 'index($2, r) == 1 {print $2}' /proc/mounts | sort -r | xargs -r umount -l 2>/dev/null || true
}
trap unmount_all EXIT
unmount_all

started=$(date +%s)
if [[ ! -f $root/.trainyard-debootstrap-done ]]; then
  mirror=$(bash scripts/debian-mirror.sh)
  log "debootstrap trixie (minbase) into $root from $mirror; this takes minutes"
  rm -rf "$root"
  mkdir -p "$root"
  debootstrap --variant=minbase trixie "$root" "$mirror" >"$root.debootstrap.log" 2>&1 ||
    die "debootstrap failed (log: $root.debootstrap.log; is $mirror reachable?)
$(tail -20 "$root.debootstrap.log")"
  touch "$root/.trainyard-debootstrap-done"
fi
# Name resolution for the tests' 127.0.0.1 rendezvous and Gloo's hostname lookup.
cp /etc/hosts "$root/etc/hosts"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true

mount -t proc proc "$root/proc"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
mkdir -p "$root/dev/shm" "$root/src/trainyard"
mount -t tmpfs tmpfs "$root/dev/shm"
mount --bind "$repo" "$root/src/trainyard"
mount -o remount,bind,ro "$root/src/trainyard"

in_root() { chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"; }

# dpkg-query exits 1 when a package is unknown to it: that is what we are asking.
missing=$({ in_root dpkg-query -W -f='${Package} ${Status}\n' "${PACKAGES[@]}" 2>&1 || true; } |
  awk '$NF != "installed" || /no packages found/' | wc -l)
if [[ $missing -gt 0 ]]; then
  log "installing ${#PACKAGES[@]} packages in the root (libtorch-dev, python3-torch, ...)"
  in_root sh -c 'export DEBIAN_FRONTEND=noninteractive; apt-get update -q &&
    apt-get install -y -q --no-install-recommends "$@"' sh "${PACKAGES[@]}" >"$root.apt.log" 2>&1 ||
    die "apt-get install in the root failed (log: $root.apt.log)
$(tail -20 "$root.apt.log")"
fi
torch_version=$(in_root python3 -c 'import torch; print(torch.__version__)' 2>/dev/null || echo "?")
libtorch_version=$(in_root dpkg-query -W -f='${Version}' libtorch-dev)
setup_seconds=$(($(date +%s) - started))

if [[ -n $lock ]]; then
  exec 9>>"$lock"
  log "waiting for $lock"
  flock 9
fi

# The targets the tests below need (not the server and CLI, which have no LibTorch code).
TARGETS=(trainyard-bert model_test model_parity_test train_test train_step_parity_test
  train_slow_test train_core_test train_gpu_test distributed_test distributed_multiprocess_test text_test
  data_test
  make_splits_cli_test predict_cli_test predict_parity_cli_test tokenize_cli_test train_cli_test
  train_distributed_cli_test train_bench)
# make decides what to rebuild from timestamps: a build tree last built from another checkout
# (mounted at the same /src/trainyard) can hold objects newer than this checkout's older sources,
# and linking those gave crashes (free() of a bad pointer, std::bad_alloc) in the tests. So the
# tree is wiped when the checkout changes; ccache keeps the rebuild short.
if [[ -f $root/build/.trainyard-source && $(cat "$root/build/.trainyard-source") != "$repo" ]]; then
  log "the build tree was made from $(cat "$root/build/.trainyard-source"); starting it afresh"
  rm -rf "$root/build"
fi
mkdir -p "$root/build"
echo "$repo" >"$root/build/.trainyard-source"
build_started=$(date +%s)
log "configuring and building ${#TARGETS[@]} targets against libtorch-dev $libtorch_version (-j$jobs)"
in_root sh -c 'export CCACHE_DIR=/var/cache/ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
  cmake -S /src/trainyard -B /build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/build.configure.log 2>&1 ||
    { tail -40 /build.configure.log; exit 1; }
  shift; cmake --build /build -j"$0" --target "$@" -- -k' "$jobs" x "${TARGETS[@]}" >"$root.build.log" 2>&1 ||
  die "the build against LibTorch $libtorch_version failed (log: $root.build.log)
$(grep -E 'error|Error' "$root.build.log" | head -30)"
build_seconds=$(($(date +%s) - build_started))
configured=$(grep -o 'LibTorch [0-9.]*' "$root/build.configure.log" | head -1)

test_summary="not run (--no-tests)"
test_status=0
if [[ $run_tests == 1 ]]; then
  log "running ctest -R '$TESTS'"
  test_started=$(date +%s)
  in_root sh -c 'cd /build && ctest --output-on-failure -j"$0" -R "$1"' "$jobs" "$TESTS" \
    >"$root.ctest.log" 2>&1 || test_status=$?
  test_seconds=$(($(date +%s) - test_started))
  test_summary="$(grep -E 'tests passed|tests failed' "$root.ctest.log" | tail -1) in ${test_seconds}s"
  grep -E '^ *[0-9]+/[0-9]+ Test' "$root.ctest.log" | sed 's/^/  /' >&2 || true
  skipped=$(grep -c 'Skipped' "$root.ctest.log" || true)
  [[ $skipped == 0 ]] || test_summary+=" ($skipped skipped)"
fi

bench_lines=()
if [[ $bench == 1 ]]; then
  [[ -x $host_build/bench/train_bench ]] ||
    die "$host_build/bench/train_bench not built: cmake --build $host_build --target train_bench"
  # Back to back on the same machine, the same arguments; each with its own distribution's
  # python3-torch running bench/train_article_pipeline.py.
  log "train_bench under LibTorch 1.13 (host, $host_build)"
  bench_lines+=("1.13: $("$host_build/bench/train_bench" --csv data/sample/uci_sentiment.csv \
    --vocab data/sample/vocab.txt | tee /dev/stderr | tail -1)")
  log "train_bench under LibTorch $libtorch_version (trixie root)"
  bench_lines+=("2.6: $(in_root /build/bench/train_bench --csv /src/trainyard/data/sample/uci_sentiment.csv \
    --vocab /src/trainyard/data/sample/vocab.txt | tee /dev/stderr | tail -1)")
fi

cat <<EOF
== libtorch2-check summary ==
root:        $root (Debian trixie), setup ${setup_seconds}s
libtorch:    libtorch-dev $libtorch_version ($configured), python3-torch $torch_version
build:       ${#TARGETS[@]} targets in ${build_seconds}s (log: $root.build.log)
tests:       $test_summary (log: $root.ctest.log)
EOF
for line in "${bench_lines[@]}"; do echo "train_bench $line"; done
exit "$test_status"
