"""Prints the closing line of a meson test run, 'N passed, N failed, N skipped', counted from
meson's testlog.json (one JSON object per test)."""
import json
import sys

counts = {"passed": 0, "failed": 0, "skipped": 0}
with open(sys.argv[1]) as log:
    for line in log:
        result = json.loads(line)["result"]
        if result in ("OK", "EXPECTEDFAIL"):
            counts["passed"] += 1
        elif result == "SKIP":
            counts["skipped"] += 1
        else:
            counts["failed"] += 1
print(f"{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped")
