#!/usr/bin/env bash
# Builds Trainyard's container images FROM scratch, out of binaries already on this machine or a
# Debian root made by debootstrap, and pushes them to the registry (no Docker Hub or other base
# image is reachable here). See docs/containers.md "Prebuilt images".
#
#   scripts/build-images.sh [--no-push] [busybox] [bert-sentiment] [pytorch]
#                                                        (default: busybox bert-sentiment)
#
#   trainyard/busybox         Debian's busybox-static (one static binary) with its applets as
#                             relative links in /bin; ENTRYPOINT none, CMD ["sh"]. Test image.
#   trainyard/bert-sentiment  the built trainyard-bert binary, every shared library `ldd` lists
#                             for it (LibTorch and its dependencies, copied at their host paths),
#                             and the sample BERT vocab at /opt/trainyard/vocab.txt;
#                             ENTRYPOINT ["/usr/local/bin/trainyard-bert"]. The image runs only on
#                             hosts with the same CPU architecture; its libraries are Debian 12's.
#   trainyard/pytorch         what Vertex's prebuilt PyTorch training image names run as: a Debian
#                             12 minbase made by debootstrap (root; Debian's mirror, the one apt
#                             uses, or $DEBIAN_MIRROR) with python3 (and `python`), Debian's
#                             python3-torch 1.13, NumPy, pip (with setuptools and wheel: it
#                             installs pythonPackageSpec archives) and `import hypertune`
#                             (cloudml-hypertune from PyPI, the version pinned in
#                             scripts/venv/requirements.lock, installed with the project's venv);
#                             CMD python3; PIP_CONSTRAINT keeps pip to the NumPy major its torch
#                             is built against. Labelled with its Debian release and torch version.
#                             TRAINYARD_PYTORCH_RELEASE=trixie builds it on Debian 13 (torch 2.6)
#                             instead (bench/README.md compares the two).
#                             About 1.2 GB; debootstrap reuses apt's package cache. Not built by
#                             default: it takes minutes (docs/containers.md "Prebuilt images").
#                             A local image made by the same recipe (this script, the release,
#                             the lock) less than TRAINYARD_IMAGE_MAX_AGE_DAYS (default 7) ago is
#                             pushed again instead of rebuilt; TRAINYARD_REBUILD_IMAGES=1 rebuilds.
#
# Images are tagged localhost/trainyard/NAME:latest and, unless --no-push, pushed to
# $TRAINYARD_REGISTRY/trainyard/NAME:latest (default: the registry of scripts/registry-local.sh).
# Environment: TRAINYARD_BERT (path of trainyard-bert; default build/tools/trainyard_bert/...),
#              PODMAN (default "podman"; e.g. "podman --root DIR --runroot DIR").
set -euo pipefail
cd "$(dirname "$0")/.."
PODMAN=${PODMAN:-podman}
push=1
targets=()
for a in "$@"; do
  case $a in
    --no-push) push=0 ;;
    busybox | bert-sentiment | pytorch) targets+=("$a") ;;
    *) sed -n '6,7p' "$0" | sed 's/^# //' >&2; exit 2 ;;
  esac
done
[[ ${#targets[@]} -gt 0 ]] || targets=(busybox bert-sentiment)

die() {
  echo "build-images: error: $*" >&2
  exit 1
}
log() { echo "build-images: $*" >&2; }

command -v ${PODMAN%% *} >/dev/null || die "podman is not installed (scripts/install-deps.sh --test)"
if [[ $push == 1 && -z ${TRAINYARD_REGISTRY:-} ]]; then
  env_line=$(scripts/registry-local.sh env 2>/dev/null) ||
    die "no registry: set TRAINYARD_REGISTRY or run scripts/registry-local.sh start (or use --no-push)"
  eval "$env_line"
fi
work=$(mktemp -d /tmp/trainyard-images-XXXXXX)
# A debootstrap that failed half-way can leave its /proc and /sys mounted in the rootfs.
cleanup() {
  awk -v w="$work/" 'index($2, w) == 1 {print $2}' /proc/mounts | sort -r | xargs -r umount -l 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# copy_with_libs FILE ROOTFS: FILE and every library ldd resolves for it, at their host paths.
copy_with_libs() {
  local file=$1 root=$2 lib
  for lib in $(ldd "$file" | grep -o '/[^ ]*' | sort -u); do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
}

# build NAME CONTEXT: builds localhost/trainyard/NAME:latest and pushes it.
build() {
  local name=$1 ctx=$2 image=localhost/trainyard/$1:latest
  $PODMAN build --quiet -t "$image" "$ctx" >/dev/null
  log "built $image ($($PODMAN image inspect --format '{{.Size}}' "$image") bytes)"
  if [[ $push == 1 ]]; then
    $PODMAN push --quiet "$image" "$TRAINYARD_REGISTRY/trainyard/$name:latest"
    log "pushed $TRAINYARD_REGISTRY/trainyard/$name:latest"
  fi
}

build_busybox() {
  [[ -x /bin/busybox ]] || die "busybox-static is not installed (apt-get install busybox-static)"
  # Static = ldd finds no loader. Its output is captured first: ldd exits 1 for a static binary,
  # which pipefail would turn into a failed check (and `file` is not installed by install-deps.sh).
  local deps
  deps=$(ldd /bin/busybox 2>&1 || true)
  [[ $deps == *"not a dynamic executable"* || $deps == *"statically linked"* ]] ||
    die "/bin/busybox is not static: install busybox-static"
  local ctx=$work/busybox
  mkdir -p "$ctx/rootfs/bin" "$ctx/rootfs/tmp"
  cp /bin/busybox "$ctx/rootfs/bin/busybox"
  for a in $(/bin/busybox --list); do [[ $a == busybox ]] || ln -s busybox "$ctx/rootfs/bin/$a"; done
  # Only COPY: a FROM scratch build with no RUN step needs no OCI runtime (crun/runc).
  cat >"$ctx/Containerfile" <<'CF'
FROM scratch
COPY rootfs/ /
ENV PATH=/bin
CMD ["sh"]
CF
  build busybox "$ctx"
}

build_bert() {
  local bin=${TRAINYARD_BERT:-build/tools/trainyard_bert/trainyard-bert}
  [[ -x $bin ]] || die "$bin not found: cmake --build build --target trainyard-bert (or set TRAINYARD_BERT)"
  [[ -s data/sample/vocab.txt ]] || die "data/sample/vocab.txt missing: scripts/fetch-sample-data.sh"
  local ctx=$work/bert
  mkdir -p "$ctx/rootfs/usr/local/bin" "$ctx/rootfs/opt/trainyard" "$ctx/rootfs/tmp"
  chmod 1777 "$ctx/rootfs/tmp"
  cp "$bin" "$ctx/rootfs/usr/local/bin/trainyard-bert"
  copy_with_libs "$bin" "$ctx/rootfs"
  cp data/sample/vocab.txt "$ctx/rootfs/opt/trainyard/vocab.txt"
  cat >"$ctx/Containerfile" <<'CF'
FROM scratch
COPY rootfs/ /
ENV PATH=/usr/local/bin
ENTRYPOINT ["/usr/local/bin/trainyard-bert"]
CF
  build bert-sentiment "$ctx"
}

# pushes NAME:latest again
push_again() {
  local image=localhost/trainyard/$1:latest
  if [[ $push == 1 ]]; then
    $PODMAN push --quiet "$image" "$TRAINYARD_REGISTRY/trainyard/$1:latest"
    log "pushed $TRAINYARD_REGISTRY/trainyard/$1:latest"
  fi
}

# recent_image NAME RECIPE: true when localhost/trainyard/NAME:latest carries label
# io.trainyard.recipe=RECIPE and is younger than TRAINYARD_IMAGE_MAX_AGE_DAYS: made the same
# way from Debian packages that are at most that old.
recent_image() {
  [[ ${TRAINYARD_REBUILD_IMAGES:-0} != 1 ]] || return 1
  local image=localhost/trainyard/$1:latest recipe created age_days
  recipe=$($PODMAN image inspect --format '{{index .Labels "io.trainyard.recipe"}}' "$image" 2>/dev/null) || return 1
  [[ $recipe == "$2" ]] || return 1
  created=$($PODMAN image inspect --format '{{.Created.Unix}}' "$image" 2>/dev/null) || return 1
  age_days=$(( ($(date +%s) - created) / 86400 ))
  [[ $age_days -lt ${TRAINYARD_IMAGE_MAX_AGE_DAYS:-7} ]] || return 1
  log "reusing $image: same recipe, built $age_days day(s) ago (TRAINYARD_REBUILD_IMAGES=1 rebuilds)"
}

build_pytorch() {
  command -v debootstrap >/dev/null || die "debootstrap is not installed (apt-get install debootstrap)"
  [[ $(id -u) == 0 ]] || die "the pytorch image is made with debootstrap, which needs root"
  local ctx=$work/pytorch mirror
  mirror=$(bash scripts/debian-mirror.sh)
  mkdir -p "$ctx"
  local release=${TRAINYARD_PYTORCH_RELEASE:-bookworm}
  case $release in trixie | bookworm) ;; *) die "TRAINYARD_PYTORCH_RELEASE is trixie or bookworm, not $release" ;; esac
  local recipe
  recipe=$(cat scripts/build-images.sh scripts/venv/requirements.lock <(echo "$release") | sha256sum | cut -c1-16)
  if recent_image pytorch "$recipe"; then
    push_again pytorch
    return
  fi
  log "debootstrap $release (minbase + python3-torch) from $mirror; this takes minutes"
  local cache=()
  [[ -d /var/cache/apt/archives && -w /var/cache/apt/archives ]] && cache=(--cache-dir=/var/cache/apt/archives)
  # python3-pip (with setuptools and wheel): pythonPackageSpec archives are pip-installed in the
  # replica, as on Vertex (spec/python_package_launcher.h). libopenblas0-pthread: torch's BLAS is
  # whatever libblas.so.3 points to, and without it that is the reference BLAS (measured here:
  # 3 GFLOP/s for a 1024^3 matmul; HF Trainer on BERT-Tiny at 14 samples/s).
  debootstrap --variant=minbase \
    --include=python3,python-is-python3,python3-torch,python3-numpy,python3-pip,python3-setuptools,python3-wheel,libopenblas0-pthread \
    "${cache[@]}" "$release" "$ctx/rootfs" "$mirror" >"$ctx/debootstrap.log" 2>&1 ||
    die "debootstrap failed (log below; is $mirror reachable?)
$(tail -20 "$ctx/debootstrap.log")"
  # What a training container never reads: docs, manuals, translations, apt's downloads.
  rm -rf "$ctx/rootfs"/usr/share/{doc,man,info,locale}/* "$ctx/rootfs"/var/cache/apt/* \
    "$ctx/rootfs"/var/lib/apt/lists/* "$ctx/rootfs"/var/log/*.log "$ctx/rootfs"/debootstrap
  local python_version site
  python_version=$(chroot "$ctx/rootfs" python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  site=$ctx/rootfs/usr/local/lib/python$python_version/dist-packages
  mkdir -p "$site"
  # The library Vertex's prebuilt images ship for trials' metrics, pure Python: installed by the
  # project's venv (scripts/python-venv.sh) at its pinned version into the image's site-packages.
  bash scripts/python-venv.sh
  [[ -x .venv/bin/python ]] || die "the venv is missing ($(cat .venv.unavailable 2>/dev/null)); cloudml-hypertune comes from PyPI"
  local hypertune_pin
  hypertune_pin=$(grep -i '^cloudml-hypertune==' scripts/venv/requirements.lock)
  .venv/bin/python -m pip install -q --no-deps --target "$site" "$hypertune_pin" >"$ctx/pip.log" 2>&1 ||
    die "could not install $hypertune_pin into the image: $(tail -5 "$ctx/pip.log")"
  find "$site" -name __pycache__ -prune -exec rm -rf {} +
  chroot "$ctx/rootfs" python3 -c 'import torch, numpy, hypertune, importlib.util as u, os, glob
assert all(u.find_spec(m) for m in ("pip", "setuptools", "wheel")), "no pip, setuptools or wheel"
assert all("openblas" in os.path.realpath(b) for b in glob.glob("/usr/lib/*/libblas.so.3")), "libblas.so.3 is not OpenBLAS"
print("torch", torch.__version__)' \
    >"$ctx/check.log" 2>&1 || die "the image's python3 lacks torch, numpy, hypertune or pip: $(cat "$ctx/check.log")"
  # The image's torch is built against its NumPy's major version: pip may add a newer NumPy to a
  # job's user base for a package that asks, but never one of another major (a NumPy 2 beside
  # torch 1.13 imports, then fails at torch.from_numpy). PIP_CONSTRAINT names the file.
  local numpy_major
  numpy_major=$(chroot "$ctx/rootfs" python3 -c 'import numpy; print(numpy.__version__.split(".")[0])')
  mkdir -p "$ctx/rootfs/etc/trainyard"
  printf '# python3-torch is built against NumPy %s.x (scripts/build-images.sh)\nnumpy>=%s,<%s\n' \
    "$numpy_major" "$numpy_major" "$((numpy_major + 1))" >"$ctx/rootfs/etc/trainyard/pip-constraints.txt"
  # podman gives the container its own /dev, /proc and /sys.
  rm -rf "$ctx/rootfs"/dev/* "$ctx/rootfs"/proc/* "$ctx/rootfs"/sys/*
  cat >"$ctx/Containerfile" <<'CF'
FROM scratch
COPY rootfs/ /
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin PYTHONUNBUFFERED=1 LANG=C.UTF-8
ENV PIP_CONSTRAINT=/etc/trainyard/pip-constraints.txt
CMD ["python3"]
CF
  # Which Debian and torch the image is (podman image inspect, docs/containers.md).
  local torch_version debian_version
  torch_version=$(sed -n 's/^torch //p' "$ctx/check.log")
  debian_version=$(cat "$ctx/rootfs/etc/debian_version")
  printf 'LABEL org.opencontainers.image.base.name="debian:%s" %s %s %s\n' "$release" \
    "org.debian.version=\"$debian_version\"" "org.pytorch.version=\"$torch_version\"" \
    "io.trainyard.hypertune=\"${hypertune_pin#*==}\"" >>"$ctx/Containerfile"
  echo "LABEL io.trainyard.recipe=\"$recipe\"" >>"$ctx/Containerfile"
  build pytorch "$ctx"
}

for t in "${targets[@]}"; do
  case $t in
    busybox) build_busybox ;;
    bert-sentiment) build_bert ;;
    pytorch) build_pytorch ;;
  esac
done
