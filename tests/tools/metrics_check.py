#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""metrics_check.py FILE [ASSERTION...]: checks that FILE (- for standard
input) is what node_exporter's textfile collector takes, the Prometheus
text exposition format 0.0.4 as its parser reads it (UTF-8; each family's
HELP and TYPE before its samples, its samples together; label values with
only the three escapes; no timestamp; no two samples of a family with the
same labels), then parses it with python3-prometheus-client's own parser
and evaluates each ASSERTION, a Python expression, with:

  value(METRIC, **LABELS)    the value of the one sample of METRIC whose
                             labels include LABELS (None: not one)
  samples(METRIC, **LABELS)  [(labels, value)] of those samples
  env                        os.environ (names with newlines come in so)

Exits 0 when all hold; else says which failed, and exits 1.

metrics_check.py --watch FILE STOP: reads FILE again and again (at most
60 s) until the file STOP exists, and fails at the first reading that is
not the whole of a file the collector takes (a file replaced in place
would be seen empty or cut); prints how many readings there were."""
import os
import re
import sys
import time

from prometheus_client.parser import text_string_to_metric_families

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
VALUE = r'"(?:[^"\\\n]|\\[\\"n])*"'
LABELS = r"\{(?:[a-zA-Z_][a-zA-Z0-9_]*=" + VALUE + r"(?:,[a-zA-Z_][a-zA-Z0-9_]*=" + VALUE + r")*,?)?\}"
NUMBER = r"(?:[+-]?(?:[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?|Inf)|NaN)"
SAMPLE = re.compile(r"(" + NAME + r")(" + LABELS + r")? " + NUMBER)
HELP = re.compile(r"# HELP (" + NAME + r") (?:[^\\\n]|\\[\\n])*")
TYPE = re.compile(r"# TYPE (" + NAME + r") gauge")


def strict(raw):
    """Why RAW is not what the collector takes, or None."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return "not UTF-8: %s" % e
    if text and not text.endswith("\n"):
        return "no newline at the end"
    seen, current, typed, labelsets = set(), None, False, set()
    for number, line in enumerate(text.split("\n")[:-1], 1):
        m = HELP.fullmatch(line)
        if m:
            if m.group(1) in seen:
                return "line %d: a second HELP for %s" % (number, m.group(1))
            seen.add(m.group(1))
            current, typed, labelsets = m.group(1), False, set()
            continue
        m = TYPE.fullmatch(line)
        if m:
            if m.group(1) != current or typed:
                return "line %d: TYPE not right after its HELP: %r" % (number, line)
            typed = True
            continue
        m = SAMPLE.fullmatch(line)
        if not m:
            return "line %d: not a sample of the format (or with a timestamp): %r" % (number, line)
        if m.group(1) != current or not typed:
            return "line %d: a sample outside its family: %r" % (number, line)
        if m.group(2) in labelsets:
            return "line %d: the same labels twice: %r" % (number, line)
        labelsets.add(m.group(2))
    return None


def watch(path, stop):
    readings, deadline = 0, time.monotonic() + 60
    while not os.path.exists(stop) and time.monotonic() < deadline:
        with open(path, "rb") as f:
            raw = f.read()
        # (the last family's TYPE: a file cut short at a line's end is
        # still the format)
        why = strict(raw) or (None if b"# TYPE swerve_claim_waiting_seconds gauge\n" in raw else "cut short")
        if why is not None:
            print("metrics_check: reading %d of %s: %s" % (readings + 1, path, why), file=sys.stderr)
            return 1
        readings += 1
    print(readings)
    return 0


def main():
    if sys.argv[1] == "--watch":
        return watch(sys.argv[2], sys.argv[3])
    path, assertions = sys.argv[1], sys.argv[2:]
    raw = sys.stdin.buffer.read() if path == "-" else open(path, "rb").read()
    why = strict(raw)
    if why is not None:
        print("metrics_check: %s" % why, file=sys.stderr)
        return 1
    parsed = []
    for family in text_string_to_metric_families(raw.decode("utf-8")):
        if family.type != "gauge":
            print("metrics_check: %s is a %s" % (family.name, family.type), file=sys.stderr)
            return 1
        for s in family.samples:
            if s.timestamp is not None:
                print("metrics_check: a timestamp: %r" % (s,), file=sys.stderr)
                return 1
            parsed.append(s)

    def samples(metric, **labels):
        return [(s.labels, s.value) for s in parsed if s.name == metric and labels.items() <= s.labels.items()]

    def value(metric, **labels):
        found = samples(metric, **labels)
        return found[0][1] if len(found) == 1 else None

    failed = 0
    for a in assertions:
        if not eval(a, {"samples": samples, "value": value, "env": os.environ}):
            print("metrics_check: does not hold: %s" % a, file=sys.stderr)
            failed = 1
    if failed:
        print("metrics_check: of %d samples, the first: %r" % (len(parsed), [(s.name, s.labels, s.value) for s in parsed[:8]]),
              file=sys.stderr)
    return failed


if __name__ == "__main__":
    sys.exit(main())
