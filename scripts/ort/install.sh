#!/usr/bin/env bash
# Installs one ONNX Runtime release for Node from npm into a cache folder of its own, for the `ort`,
# `ort@VERSION` and `ort-web[@VERSION]` engines and the cross-checks (no C++ code links it). Prints the
# folder on the last line.
#   install.sh                    onnxruntime-node@1.30.0 into .cache/ort
#   install.sh DIR                the same into DIR (a path: it has a '/' or is not a release)
#   install.sh VERSION [DIR]      onnxruntime-node@VERSION into .cache/ort-VERSION (1.30.0: .cache/ort)
#   install.sh web[@VERSION] [DIR] onnxruntime-web@VERSION (default 1.30.0) into .cache/ort-web[-VERSION]
# --ignore-scripts: install scripts download binaries (CUDA parts from 1.18 on, the whole binding
# before 1.10) and fail offline; a release whose package has no binary of its own for this machine
# is refused in one line, remembered in the folder so that asking again does not hit the network.
set -euo pipefail
default=1.30.0
package=onnxruntime-node
release="${1:-}"
dir="${2:-}"
if [[ -n "$release" && ! "$release" =~ ^(web(@.+)?|[0-9][0-9A-Za-z.+-]*)$ ]]; then  # install.sh DIR
  dir="$release"
  release=""
fi
version="${release:-$default}"
name=ort
if [[ "$version" == web* ]]; then
  package=onnxruntime-web
  name=ort-web
  version="${version#web}"
  version="${version#@}"
  version="${version:-$default}"
fi
if [[ ! "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]]; then
  echo "error: $package@$version: not a release number (expected MAJOR.MINOR.PATCH, e.g. 1.16.3)" >&2
  exit 2
fi
[[ "$version" == "$default" ]] || name="$name-$version"
if [[ -z "$dir" ]]; then
  # The source tree's .cache, when run from it (reduce runs its embedded copy with a folder always).
  dir="$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")/../.." && pwd)/.cache/$name"
fi
if ! why=$(mkdir -p "$dir" 2>&1) || ! why=$( { : >>"$dir/.install.lock"; } 2>&1); then
  echo "error: $dir: cannot write the folder for $package@$version (${why##*: }); choose a writable cache folder with --cache-dir or REDUCE_CACHE_DIR (or REDUCE_ORT_DIR, which releases go beside)" >&2
  exit 1
fi
# One install at a time per folder: engines of parallel slots may all ask for the same release.
exec 9>"$dir/.install.lock"
flock 9
refused="$dir/REFUSED"
if [[ -f "$refused" ]]; then
  cat "$refused" >&2
  exit 1
fi
marker="$dir/node_modules/$package/package.json"
loads() { node -e "require(process.argv[1] + '/node_modules/$package')" "$dir" 2>"$dir/load.log"; }
# A folder left without its binary (an interrupted install, a cache cleaned by hand) is installed again.
binaries() { find "$dir/node_modules/$package" \( -name '*.wasm' -o -name '*.node' -path "*/$(node -p process.platform)/*" \) -print -quit; }
if [[ -f "$marker" ]] && [[ -z "$(binaries)" ]]; then
  echo "note: $dir: $package@$version has no binary left; installing it again" >&2
  rm -rf "$dir/node_modules"
fi
if [[ ! -f "$marker" ]] || ! grep -q "\"version\": \"$version\"" "$marker"; then
  echo "note: installing $package@$version from npm into $dir (once; about 100 MB; an interrupted install is redone next time)" >&2
  (cd "$dir" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error "$package@$version" >&2) || {
    echo "error: $package@$version: npm install failed (is it a published release? see npm view $package versions)" >&2
    exit 1
  }
fi
if ! loads; then
  line="error: $dir: $package@$version does not load: $(grep -m1 -E 'Error|error' "$dir/load.log" || head -1 "$dir/load.log")"
  # A package whose install script fetches the binary (prebuild-install, download scripts) has none.
  if ! find "$dir/node_modules/$package" -name '*.node' -path "*$(node -p process.platform)*" | grep -q .; then
    scripts=$(node -p "const s = require('$marker').scripts || {}; [s.preinstall, s.install, s.postinstall].filter(Boolean).join('; ')")
    if [[ -n "$scripts" ]]; then
      line="error: $package@$version: its npm package has no binary for $(node -p 'process.platform + "/" + process.arch'); its install script ($scripts) downloads it at install time, so this release cannot be used offline"
      echo "$line" >"$refused"
      rm -rf "$dir/node_modules"
    fi
  fi
  echo "$line" >&2
  exit 1
fi
echo "$dir"
