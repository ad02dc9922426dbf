#!/usr/bin/env bash
# Prints why each test of a ctest run skipped, one line per test and reason:
#   "skipped: train_gpu_test: no CUDA device (set TRAINYARD_GPU_TEST_DEVICE=cpu for a dry run)"
# ctest lists skipped tests without their output; its JUnit file (ctest --output-junit) has both:
# the reason is the line after gtest's "file:line: Skipped", or a script's own line that says
# "skip" (exit 77). scripts/test.sh calls it after ctest.
#   scripts/skip-reasons.sh JUNIT_XML
set -euo pipefail
junit=${1:?usage: scripts/skip-reasons.sh JUNIT_XML}
[[ -f $junit ]] || exit 0
python3 - "$junit" <<'PY'
import sys
import xml.etree.ElementTree as ET

for case in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    skipped = case.find("skipped")
    if skipped is None:
        continue
    lines = (case.findtext("system-out") or "").splitlines()
    reasons = []
    for i, line in enumerate(lines):
        if line.endswith(": Skipped") and i + 1 < len(lines):
            line = lines[i + 1]
        elif "skip" not in line.lower() or line.startswith("[  SKIPPED ]"):
            continue
        if line.strip() and line not in reasons:
            reasons.append(line.strip())
    for reason in reasons[:3] or [skipped.get("message", "no reason printed")]:
        print(f"skipped: {case.get('name')}: {reason}")
PY
