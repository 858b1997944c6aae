#!/usr/bin/env bash
# Installs the Debian packages reduce needs; does nothing when they are all present.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config ccache
  libprotobuf-dev protobuf-compiler libonnx-dev libonnx-testdata
  libtbb-dev libeigen3-dev libboost-program-options-dev libboost-graph-dev
  nlohmann-json3-dev
  libzip-dev zlib1g-dev libopencv-dnn-dev libre2-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  clang-14 libclang-rt-14-dev
  nodejs npm graphviz gnuplot-nox ca-certificates python3-opencv python3-numpy
  openmpi-bin libopenmpi-dev
  dpkg-dev  # dpkg-shlibdeps: the Debian package's Depends (scripts/package-deb.sh)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# Node and npm may come from elsewhere (nvm, a tarball): only ask apt for them when absent.
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
  filtered=()
  for p in "${missing[@]}"; do
    [[ "$p" == nodejs || "$p" == npm ]] || filtered+=("$p")
  done
  missing=("${filtered[@]}")
fi

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup: installing ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
