"""Prints the closing lines of a meson test run, counted from meson's testlog.json (one JSON object
per test): 'N passed, N failed, N skipped', then for the skipped ones why, grouped by the reason
each test printed ("SKIP: <why>", the harness's line, e.g. "no CUDA device ..."; else its last
line of output), with the tests' names."""
import json
import sys
import textwrap


def skip_reason(result):
    lines = [line.strip() for line in result.get("stdout", "").splitlines() if line.strip()]
    for line in lines:
        if line.startswith("SKIP: "):
            return line[len("SKIP: "):]
    return lines[-1] if lines else "(no reason printed)"


counts = {"passed": 0, "failed": 0, "skipped": 0}
skipped = {}
with open(sys.argv[1]) as log:
    for line in log:
        result = json.loads(line)
        if result["result"] in ("OK", "EXPECTEDFAIL"):
            counts["passed"] += 1
        elif result["result"] == "SKIP":
            counts["skipped"] += 1
            # meson's "project:suite / name" to the name alone
            name = result["name"].split(" / ")[-1]
            skipped.setdefault(skip_reason(result), []).append(name)
        else:
            counts["failed"] += 1
print(f"{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped")
for reason, names in sorted(skipped.items(), key=lambda item: -len(item[1])):
    print(f"  {len(names)} skipped: {reason}")
    print(textwrap.fill(", ".join(names), width=100, initial_indent="    ",
                        subsequent_indent="    ", break_on_hyphens=False))
