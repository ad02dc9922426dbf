#!/usr/bin/env bash
# Makes PyPI's torch wheel usable as a CPU LibTorch for CMake on a host without CUDA, for the
# LibTorch-by-release measurements in bench/README.md ("LibTorch on Debian 12: 1.13 or PyPI's
# 2.x"). Not part of the build: Debian's libtorch-dev stays the default (the table says why).
#
#   scripts/pypi-libtorch.sh [VERSION]     (default 2.11.0, the GPU hosts' version)
#
# Downloads, with the project's venv pip, the pinned torch wheel and the two CUDA runtime wheels
# its libtorch_cpu.so links against even on CPU (libcudart, libcupti), into
# ~/.cache/trainyard/pypi-libtorch-VERSION, unpacks the C++ parts, and writes a TorchConfig.cmake
# there that defines the `torch` target from torch_cpu and c10 only (the wheel's own config needs
# a CUDA toolkit). Prints the directory to pass as -DTorch_DIR=. The wheel has no Gloo headers:
# src/distributed compiles against Debian's libgloo-dev, which need not match its Gloo.
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:-2.11.0}
dest=${TRAINYARD_CACHE:-$HOME/.cache/trainyard}/pypi-libtorch-$version
declare -A companions=([2.11.0]="nvidia-cuda-runtime==13.0.96 nvidia-cuda-cupti==13.0.85")
[[ -n ${companions[$version]:-} ]] || { echo "pypi-libtorch: no CUDA runtime pins for torch $version" >&2; exit 1; }
bash scripts/python-venv.sh
[[ -x .venv/bin/python ]] || { echo "pypi-libtorch: the venv is missing: $(cat .venv.unavailable 2>/dev/null)" >&2; exit 1; }
if [[ ! -f $dest/TorchConfig.cmake ]]; then
  rm -rf "$dest" && mkdir -p "$dest/wheels"
  started=$(date +%s)
  # shellcheck disable=SC2086
  .venv/bin/python -m pip download -q --no-deps -d "$dest/wheels" "torch==$version" ${companions[$version]} >&2
  echo "pypi-libtorch: downloaded $(du -sh "$dest/wheels" | cut -f1) in $(($(date +%s) - started)) s" >&2
  (cd "$dest" && for w in wheels/*.whl; do python3 -m zipfile -e "$w" unpacked; done)
  mkdir -p "$dest/lib"
  cp -a "$dest"/unpacked/torch/lib/{libtorch_cpu.so,libc10.so,libgomp.so.1} "$dest/lib/"
  cp -a "$dest"/unpacked/nvidia/cu*/lib/{libcudart.so.*,libcupti.so.*} "$dest/lib/"
  mv "$dest/unpacked/torch/include" "$dest/include"
  rm -rf "$dest/unpacked" "$dest/wheels"
  cat >"$dest/TorchConfig.cmake" <<CMAKE
# PyPI torch $version as a CPU LibTorch (scripts/pypi-libtorch.sh).
set(Torch_VERSION $version)
if(NOT TARGET torch)
  add_library(torch SHARED IMPORTED)
  set_target_properties(torch PROPERTIES
    IMPORTED_LOCATION "\${CMAKE_CURRENT_LIST_DIR}/lib/libtorch_cpu.so"
    INTERFACE_INCLUDE_DIRECTORIES "\${CMAKE_CURRENT_LIST_DIR}/include;\${CMAKE_CURRENT_LIST_DIR}/include/torch/csrc/api/include"
    INTERFACE_COMPILE_DEFINITIONS "USE_DISTRIBUTED;USE_C10D_GLOO;_GLIBCXX_USE_CXX11_ABI=1"
    INTERFACE_LINK_LIBRARIES "\${CMAKE_CURRENT_LIST_DIR}/lib/libc10.so"
    INTERFACE_LINK_OPTIONS "-Wl,-rpath,\${CMAKE_CURRENT_LIST_DIR}/lib;-Wl,--no-as-needed")
endif()
set(TORCH_LIBRARIES torch)
set(Torch_FOUND TRUE)
CMAKE
  echo "pypi-libtorch: unpacked $(du -sh "$dest" | cut -f1) into $dest" >&2
fi
echo "$dest"
