#!/usr/bin/env python3
"""Lists non-test C++ functions in src/ and tools/ longer than 80 lines (STYLE.md: functions fit a
screen) that have no comment directly above saying why they are long.

Exit status: 0 when every long function is split or explained, 1 otherwise (one line per
offender: "LINES path:line signature").

  python3 scripts/long-functions.py          # the check
  python3 scripts/long-functions.py -v       # also the explained ones

A why-comment is the block of `//` lines directly above the definition, and it must say why the
function is long: it has to contain the word "long" ("Longer than a screen on purpose: ...",
"One long function because it is data: ..."). Split a function rather than explain it unless
splitting hurts reading (tables, embedded sources, one loop over shared state).

The scan is a heuristic for Google-style layout (clang-format keeps it): a definition starts at
column 0 with a name and "(", its signature ends in "{" within 6 lines, and its body ends at the
next "}" in column 0. Lambdas and member functions defined inside a class body are counted as part
of what encloses them. Tests (*_test.cc) and test support (files named *testing* or
*conformance*) are skipped.
"""
import os
import re
import sys

MAX_LINES = 80
ROOTS = ("src", "tools")
NOT_A_DEFINITION = re.compile(
    r"^(namespace|struct|class|enum|extern|using|static_assert|#|//|TEST|INSTANTIATE|REGISTER)")
DEFINITION_START = re.compile(r"^[A-Za-z_].*\(")
WHY = re.compile(r"\blong", re.IGNORECASE)


def is_scanned(name):
    return (name.endswith(".cc") and not name.endswith("_test.cc") and "testing" not in name and
            "conformance" not in name)


def long_functions(path):
    """Yields (lines, first line number, signature, comment above) per definition over MAX_LINES."""
    with open(path, errors="replace") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if DEFINITION_START.match(line) and not NOT_A_DEFINITION.match(line):
            k = i
            while k < len(lines) and not lines[k].rstrip().endswith(("{", ";")):
                k += 1
            if k < len(lines) and lines[k].rstrip().endswith("{") and k - i < 6:
                end = k
                while end < len(lines) and not lines[end].startswith("}"):
                    end += 1
                length = end - i + 1
                if length > MAX_LINES:
                    c = i - 1
                    comment = []
                    while c >= 0 and lines[c].startswith("//"):
                        comment.insert(0, lines[c])
                        c -= 1
                    yield length, i + 1, line.strip(), " ".join(comment)
                i = end
        i += 1


def main():
    verbose = "-v" in sys.argv[1:]
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    found = []
    for root in ROOTS:
        for dirpath, _, files in os.walk(root):
            for name in files:
                if is_scanned(name):
                    path = os.path.join(dirpath, name)
                    for length, line, signature, comment in long_functions(path):
                        found.append((length, path, line, signature, bool(WHY.search(comment))))
    found.sort(reverse=True)
    offenders = [f for f in found if not f[4]]
    for length, path, line, signature, explained in found:
        if verbose or not explained:
            note = " (explained)" if explained else ""
            print(f"{length:4d} {path}:{line} {signature[:80]}{note}")
    if offenders:
        print(f"long-functions: {len(offenders)} function(s) over {MAX_LINES} lines without a "
              "comment above saying why they are long; split them or explain", file=sys.stderr)
        return 1
    print(f"long-functions: every function over {MAX_LINES} lines is explained "
          f"({len(found)} explained)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
