#!/usr/bin/env bash
# `cmake --install` and the Debian package, as a user gets them (issue 68):
#   install_test.sh install BUILD SOURCE   installs into a temporary prefix, then, with the source
#       tree out of reach (a private mount namespace hides it under an empty tmpfs), reduces the
#       bundled real-engine example with `--engine ort` from another folder.
#   install_test.sh completion BUILD SOURCE   bash completion of commands, options and engine kinds.
#   install_test.sh package BUILD SOURCE   builds the .deb with CPack in BUILD, inspects it with
#       dpkg-deb (files, Depends, Recommends) and runs the `reduce` it holds.
set -euo pipefail
mode="$1"
build="$(cd "$2" && pwd)"
source_dir="$(cd "$3" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

case "$mode" in
  install)
    prefix="$work/prefix"
    cmake --install "$build" --prefix "$prefix" >/dev/null
    for f in bin/reduce share/bash-completion/completions/reduce share/doc/reduce/README.md share/doc/reduce/docs/guide.md share/doc/reduce/docs/reference.md \
             share/reduce/examples/manifest.tsv share/reduce/examples/engines/resize_align_corners_ort.onnxtxt \
             share/reduce/examples/engines/manifest.tsv; do
      [ -e "$prefix/$f" ] || fail "not installed: $f"
    done
    # Every relative link of the installed docs resolves in the installed tree (README -> docs/, docs -> ../bench).
    python3 - "$prefix/share/doc/reduce" <<'PY' || fail "a relative link of the installed docs does not resolve"
import os, re, sys
root, broken = sys.argv[1], []
for folder, _, files in os.walk(root):
    for name in files:
        if not name.endswith(".md"):
            continue
        text = open(os.path.join(folder, name), encoding="utf-8").read()
        text = re.sub(r"```.*?```", "", text, flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = os.path.normpath(os.path.join(folder, target.split("#")[0]))
            if not os.path.exists(path):
                broken.append(os.path.relpath(os.path.join(folder, name), root) + ": " + target)
for b in broken:
    print("broken link:", b, file=sys.stderr)
sys.exit(1 if broken else 0)
PY
    # The releases the tests installed (REDUCE_CACHE_DIR's ort), seen from the cache folder the
    # installed reduce is given; the source tree itself is hidden.
    cache="$work/cache"
    mkdir -p "$cache/ort" "$work/elsewhere"
    run='mount --bind "$1" "$2/ort" && mount -t tmpfs none "$3" && cd "$4" &&
         [ -z "$(ls -A "$3")" ] && "$5/bin/reduce" "$5/share/reduce/examples/engines/resize_align_corners_ort.onnxtxt" \
           --engine ort --cache-dir "$2" -o bug >out.txt 2>err.txt; echo $? >rc.txt'
    if unshare -m --propagation private true 2>/dev/null; then
      unshare -m --propagation private bash -c "$run" bash "$source_dir/.cache/ort" "$cache" "$source_dir" \
        "$work/elsewhere" "$prefix"
      echo "source tree hidden: yes"
    else
      # Without the right to make a mount namespace (not root): the same run, the tree in place.
      cp -a "$source_dir/.cache/ort/." "$cache/ort/"
      (cd "$work/elsewhere" && "$prefix/bin/reduce" "$prefix/share/reduce/examples/engines/resize_align_corners_ort.onnxtxt" \
         --engine ort --cache-dir "$cache" -o bug >out.txt 2>err.txt; echo $? >rc.txt)
      echo "source tree hidden: no (unshare -m needs root here)"
    fi
    cd "$work/elsewhere"
    [ "$(cat rc.txt)" = 0 ] || { cat out.txt err.txt; fail "the installed reduce exited $(cat rc.txt)"; }
    grep -q 'reduced 8 -> 1 nodes (Resize x1)' out.txt || { cat out.txt; fail "not reduced to the Resize"; }
    [ -s bug/model.onnx ] && [ -s bug/report.md ] && [ -s bug/graph.png ] || fail "bundle incomplete: $(ls bug)"
    echo "ok: the installed reduce reduced the ort example to its Resize from $work/elsewhere"
    ;;
  package)
    out="$work/dist"
    mkdir -p "$out"
    # gzip: the test's binary is a sanitizer build several times the size of a release one.
    (cd "$build" && cpack -G DEB -B "$out" -D CPACK_DEBIAN_COMPRESSION_TYPE=gzip >"$work/cpack.txt") ||
      { cat "$work/cpack.txt"; fail "cpack"; }
    deb=$(ls "$out"/reduce_*.deb)
    dpkg-deb -I "$deb" >"$work/info.txt"
    dpkg-deb -c "$deb" >"$work/files.txt"
    grep -q '^ Package: reduce$' "$work/info.txt" || fail "no Package: reduce"
    version=$(sed -n 's/.*kReduceVersion = "\(.*\)";/\1/p' "$source_dir/core/include/core/version.h")
    grep -q "^ Version: $version\$" "$work/info.txt" || { cat "$work/info.txt"; fail "version is not $version"; }
    # Depends from the binary's libraries: protobuf and ONNX at least, and bash for the installer.
    depends=$(grep '^ Depends:' "$work/info.txt")
    for lib in libprotobuf libonnx bash; do
      echo "$depends" | grep -q "$lib" || fail "Depends lacks $lib: $depends"
    done
    grep -q '^ Recommends: .*graphviz.*gnuplot-nox.*nodejs' "$work/info.txt" || fail "Recommends"
    for f in ./usr/bin/reduce ./usr/share/doc/reduce/README.md ./usr/share/reduce/examples/engines/manifest.tsv \
             ./usr/share/bash-completion/completions/reduce; do
      grep -q " $f\$" "$work/files.txt" || fail "the package lacks $f"
    done
    if grep -q -E '/build-|\.cache|/tests/' "$work/files.txt"; then fail "the package holds build or test files"; fi
    dpkg-deb -x "$deb" "$work/root"
    "$work/root/usr/bin/reduce" --version | grep -q "^reduce $version\$" || fail "the packaged reduce does not run"
    echo "ok: $(basename "$deb"): $(echo "$depends" | tr -s ' ')"
    ;;
  completion)
    # shellcheck source=/dev/null
    source "$source_dir/scripts/completion/reduce.bash"
    complete_words() {  # complete_words WORD...: COMPREPLY for the last word
      COMP_WORDS=("$build/reduce" "$@")
      COMP_CWORD=$#
      COMPREPLY=()
      _reduce
      printf '%s\n' "${COMPREPLY[@]}"
    }
    complete_words ch | grep -qx check || fail "'ch' does not complete to check"
    complete_words check m.onnx --eng | grep -qx -- --engine || fail "check's --eng does not complete to --engine"
    complete_words batch --retr | grep -qx -- --retry || fail "batch's --retr does not complete to --retry"
    complete_words m.onnx --resu | grep -qx -- --resume || fail "reduce's --resu does not complete to --resume"
    kinds=$(complete_words check m.onnx --engine or | sort | tr '\n' ' ')
    [ "$kinds" = "ort ort-web " ] || fail "--engine or completes to '$kinds'"
    complete_words help pre | grep -qx precision || fail "help pre does not complete to precision"
    echo "ok: completion of commands, options and engine kinds"
    ;;
  *) fail "unknown mode $mode" ;;
esac
