#!/usr/bin/env bash
# Downloads (apt-get download, no install) the Debian packages scripts/gpu-check.sh unpacks with
# `dpkg -x` on an offline GPU host that has CUDA and PyTorch but no package registry, into DIR
# (default gpu-debs/, git-ignored: carry it to that host with the checkout).
#
#   scripts/gpu-debs.sh [DIR]
#
# What is in it: the build's -dev packages (headers, CMake/pkg-config files) and the shared
# libraries their .so links point at, from Debian 12 (bookworm: older than the GPU host's glibc
# and libstdc++, so its libraries load there), pkgconf to read their .pc files, and Gloo's headers
# from sid. c10d's ProcessGroupGloo.hpp, which the trainer's distributed code includes, includes
# Gloo's headers; PyTorch wheels ship c10d's headers but not Gloo's, and their bundled Gloo is
# recent (2.4+ overrides the store API Gloo added in 2024), which bookworm's (2022) and trixie's
# (2023-12) headers lack. Needs apt's lists for bookworm (this machine's) and network access to
# Debian's mirror (DEBIAN_MIRROR, default: the one apt uses here). About 15 MB.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-gpu-debs}

die() {
  echo "gpu-debs: error: $*" >&2
  exit 1
}

# The build's Debian 12 packages (scripts/install-deps.sh's list less LibTorch, OpenBLAS, Gloo),
# with the runtime packages their lib*.so links resolve to; a full configure of the repo needs
# them all (the trainer's targets are then built alone).
BOOKWORM=(
  nlohmann-json3-dev libcli11-dev libutf8proc-dev libutf8proc2 libcsv-dev libcsv3
  libgtest-dev libgmock-dev libsqlite3-dev libsqlite3-0 libyaml-cpp-dev libyaml-cpp0.7
  libeigen3-dev libcpp-httplib-dev libcpp-httplib0.11 libssl-dev libssl3 zlib1g-dev zlib1g
  libbrotli-dev libbrotli1 pkgconf pkgconf-bin libpkgconf3
)
GLOO_SUITE=sid
GLOO=(libgloo-dev)

command -v apt-get >/dev/null || die "needs apt-get (a Debian 12 machine)"
grep -qs 'VERSION_CODENAME=bookworm' /etc/os-release ||
  echo "gpu-debs: warning: this is not Debian 12; the 'bookworm' packages come from its apt lists" >&2
mkdir -p "$out"
out=$(realpath "$out")
rm -f "$out"/*.deb

(cd "$out" && apt-get -o APT::Sandbox::User=root download -q "${BOOKWORM[@]}" >/dev/null) ||
  die "apt-get download of the bookworm packages failed (apt-get update first?)"

# Gloo's headers from $GLOO_SUITE through a private apt state (this machine's lists stay as they are).
tmp=$(mktemp -d /tmp/gpu-debs-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lists/partial" "$tmp/archives/partial"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(bash scripts/debian-mirror.sh) $GLOO_SUITE main" \
  >"$tmp/sources.list"
apt_private=(-o "Dir::Etc::SourceList=$tmp/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$tmp/lists" -o "Dir::Cache::pkgcache=$tmp/pkgcache.bin"
  -o "Dir::Cache::srcpkgcache=$tmp/srcpkgcache.bin" -o "Dir::Cache::archives=$tmp/archives")
apt-get "${apt_private[@]}" update -q >"$tmp/update.log" 2>&1 ||
  die "apt-get update for $GLOO_SUITE failed: $(tail -3 "$tmp/update.log")"
(cd "$out" && apt-get "${apt_private[@]}" -o APT::Sandbox::User=root download -q "${GLOO[@]}" >/dev/null) ||
  die "apt-get download of ${GLOO[*]} from $GLOO_SUITE failed"

ls "$out"/*.deb | sed 's|.*/||' >"$out/MANIFEST"
echo "gpu-debs: $(wc -l <"$out/MANIFEST") packages, $(du -sh "$out" | cut -f1) in $out" >&2
