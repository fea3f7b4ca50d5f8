#!/usr/bin/env python3
"""Checks the CLI's JSON writer against Python's strict json parser: every line printed by
json_probe must be one valid JSON document (no raw control characters, valid UTF-8), and each
string must decode to exactly what Python's UTF-8 decoder (errors="replace", which substitutes
one U+FFFD per maximal invalid subpart) makes of the input bytes.

    check_json_output.py <json_probe>
"""

import json
import subprocess
import sys


def main():
    output = subprocess.run([sys.argv[1]], capture_output=True, check=True).stdout
    failures = []
    lines = output.split(b"\n")
    assert lines[-1] == b"", "the output must end with a newline"
    for number, raw in enumerate(lines[:-1], 1):
        try:
            text = raw.decode("utf-8")  # strict: the writer must never emit invalid UTF-8
            document = json.loads(text)  # strict: raw control characters are rejected
        except ValueError as e:
            failures.append(f"line {number}: {raw!r}: {e}")
            continue
        expected = bytes.fromhex(document["hex"]).decode("utf-8", errors="replace")
        if document["quoted"] != expected:
            failures.append(f"line {number}: {document['hex']}: decoded {document['quoted']!r}, expected {expected!r}")
        if expected not in document or document[expected] is not True:
            failures.append(f"line {number}: {document['hex']}: the key did not decode to {expected!r}")
        if document["nested"] != [expected, {"k": expected}]:
            failures.append(f"line {number}: {document['hex']}: nested values differ")
    for message in failures[:50]:
        print("FAIL: " + message)
    if failures:
        sys.exit(1)
    print(f"OK: {len(lines) - 1} documents parsed strictly and decoded as Python decodes the input")


if __name__ == "__main__":
    main()
