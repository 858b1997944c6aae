#!/usr/bin/env python3
# Lists the functions whose body spans more than a number of lines (STYLE.md: 80 is the ceiling),
# counted as clang-tidy's readability-function-size counts them: the line of the closing brace
# minus the line of the opening one. A brace scanner over the sources (comments, strings and
# preprocessor lines blanked out), so it runs in a second without a build; --clang-tidy BUILD runs
# clang-tidy itself over BUILD/compile_commands.json instead (slow; to cross-check the scanner).
# usage: scripts/long_functions.py [--max N (80)] [--all] [--clang-tidy BUILD] [PATH...]
#   PATH: files or folders (default: every module); tests/, fuzz/ and engine/src/reference/ops/ are
#   left out unless --all. Exit 1 when a function is over.
import argparse
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULES = ["core", "engine", "adapters", "oracle", "reducer", "session", "precision", "batch", "cluster", "cli",
           "corpus", "bench"]
# Left to their own work (issue 49): the op files, whose kernels are being split by op family.
EXEMPT_FOLDERS = ["tests/", "fuzz/", "engine/src/reference/ops/"]
SOURCE = re.compile(r"\.(cpp|cc|h|hpp|inc)$")


def blank(text):
    """The text with comments, string and character literals and preprocessor lines replaced by
    spaces (newlines kept, so line numbers stay)."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#" or (line_start and c in " \t" and text[i:].lstrip(" \t").startswith("#")):
            # A preprocessor line, with its continuations.
            while i < n:
                if text[i] == "\n" and (i == 0 or text[i - 1] != "\\"):
                    break
                out.append("\n" if text[i] == "\n" else " ")
                i += 1
            continue
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                out.append(" ")
                i += 1
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.extend("\n" if ch == "\n" else " " for ch in text[i:end])
            i = end
            continue
        raw = re.match(r'(?:u8|u|U|L)?R"([^(\s]*)\(', text[i:i + 40])
        if raw and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = text.find(")" + raw.group(1) + '"', i)
            end = n if end < 0 else end + len(raw.group(1)) + 2
            out.extend("\n" if ch == "\n" else " " for ch in text[i:end])
            i = end
            continue
        if c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum() and i + 1 < n and text[i + 1].isalnum())):
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.extend(" " for _ in text[i:j + 1])
            i = j + 1
            continue
        out.append(c)
        line_start = c == "\n" or (line_start and c in " \t")
        i += 1
    return "".join(out)


AGGREGATE = re.compile(r"\b(namespace|class|struct|union|enum)\b|\bextern\s*$")


def top_level(head):
    """`head` with everything inside parentheses, brackets and angle-free templates removed."""
    depth, out = 0, []
    for ch in head:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def function_name(head):
    """The (qualified) name before the head's first top-level parenthesis, or None when the head
    does not declare a function (a class, namespace, enum or an initializer)."""
    flat = " ".join(head.split())
    outside = top_level(flat)
    if "(" not in flat:
        return None
    if AGGREGATE.search(outside) and not re.search(r"\)\s*(const|noexcept|override|final|\s)*(->.*)?$", flat):
        return None
    if re.search(r"(?<![=!<>+\-*/%&|^])=(?!=)", outside.replace("operator", " ")) and "operator" not in flat:
        return None  # an initializer (`x = {...}`, `auto f = [](...) {...}`)
    name = re.search(r"((?:[A-Za-z_~]\w*(?:<[^()]*>)?::)*(?:operator\s*(?:\(\)|[^\s(]+)|[A-Za-z_~]\w*))\s*\(", flat)
    return name.group(1) if name else None


def functions(path):
    """(name, first line, lines) of every function defined outside another function's body."""
    text = blank(open(path, encoding="utf-8", errors="replace").read())
    found = []
    stack = []  # for each open brace: True inside a function body
    head_start = 0
    line = 1
    open_line = []
    for i, ch in enumerate(text):
        if ch == "\n":
            line += 1
        elif ch == "{":
            inside = bool(stack) and stack[-1] is not False
            if inside:
                stack.append(True)
                open_line.append(None)
            else:
                name = function_name(text[head_start:i])
                stack.append((name, line) if name else False)
                open_line.append(line)
            head_start = i + 1
        elif ch == "}":
            if not stack:
                continue
            top = stack.pop()
            opened = open_line.pop()
            if isinstance(top, tuple):
                found.append((top[0], top[1], line - opened))
            head_start = i + 1
        elif ch == ";" and not (stack and stack[-1] is not False):
            head_start = i + 1
    return found


def sources(paths):
    for p in paths:
        if os.path.isfile(p):
            yield p
            continue
        for folder, _, files in os.walk(p):
            for f in sorted(files):
                if SOURCE.search(f):
                    yield os.path.join(folder, f)


def exempt(rel):
    return any(rel.startswith(f) for f in EXEMPT_FOLDERS)


def by_clang_tidy(build, files, limit):
    with open(os.path.join(build, "compile_commands.json")) as f:
        compiled = {os.path.realpath(e["file"]) for e in json.load(f)}
    config = "{Checks: '-*,readability-function-size', CheckOptions: [{key: readability-function-size.LineThreshold, value: %d}]}" % limit
    found = []
    for path in files:
        if os.path.realpath(path) not in compiled:
            continue
        run = subprocess.run(["clang-tidy", "-p", build, "--quiet", "--config=" + config, path], capture_output=True, text=True)
        for m in re.finditer(r"^(.*?):(\d+):\d+: warning: function '([^']+)' exceeds.*?\n(?:.*\n)*?.*?(\d+) lines including", run.stdout, re.M):
            found.append((os.path.relpath(m.group(1), ROOT), m.group(3), int(m.group(2)), int(m.group(4))))
    return found


def main():
    parser = argparse.ArgumentParser(description="functions over a number of lines")
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--max", type=int, default=80)
    parser.add_argument("--all", action="store_true", help="tests and the exempt folders too")
    parser.add_argument("--clang-tidy", metavar="BUILD", help="ask clang-tidy (needs BUILD/compile_commands.json)")
    args = parser.parse_args()
    paths = args.paths or [os.path.join(ROOT, m) for m in MODULES]
    files = [p for p in sources(paths) if args.all or not exempt(os.path.relpath(p, ROOT))]
    if args.clang_tidy:
        found = by_clang_tidy(args.clang_tidy, [f for f in files if f.endswith(".cpp")], args.max)
    else:
        found = [(os.path.relpath(p, ROOT), name, first, lines) for p in files for name, first, lines in functions(p)
                 if lines > args.max]
    for rel, name, first, lines in sorted(found, key=lambda f: (-f[3], f[0])):
        print(f"{lines:4d}  {rel}:{first}  {name}")
    print(f"{len(found)} function(s) over {args.max} lines", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
