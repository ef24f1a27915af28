# SPDX-License-Identifier: MIT
# A Python master that never calls fork() (issue 38): it starts three
# workers by HOW, each of which tries the claim "report" once and holds
# what it took until the master is done.  Exactly one of them takes it,
# and all of them share one claim directory (in $SWERVE_TMPDIR).
#
#   spawn_master.py HOW    spawn, forkserver (multiprocessing's contexts)
#                          or subprocess (the subprocess module)
#
# Prints "ok HOW", or what went wrong on stderr and exits 1.
import multiprocessing
import os
import subprocess
import sys

import swerve_claim

WORKERS = 3


def try_report(answers, done):
    """A worker: says whether it took the claim, and holds it until DONE."""
    held = swerve_claim.claim("report").acquire(0.0)
    answers.put("took" if held else "busy")
    done.wait(30)


def claim_dirs():
    base = os.environ["SWERVE_TMPDIR"]
    return [e for e in os.listdir(base) if e.startswith("swerve-claim.")]


def by_multiprocessing(how):
    ctx = multiprocessing.get_context(how)
    answers, done = ctx.Queue(), ctx.Event()
    workers = [ctx.Process(target=try_report, args=(answers, done)) for _ in range(WORKERS)]
    for w in workers:
        w.start()
    said = sorted(answers.get(timeout=30) for _ in workers)
    dirs = claim_dirs()
    done.set()
    for w in workers:
        w.join(30)
    return said, dirs, [w.exitcode for w in workers]


WORKER_CODE = """
import sys, swerve_claim
held = swerve_claim.claim("report").acquire(0.0)
print("took" if held else "busy", flush=True)
sys.stdin.read()
"""


def by_subprocess():
    workers = [
        subprocess.Popen([sys.executable, "-c", WORKER_CODE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for _ in range(WORKERS)
    ]
    said = sorted(w.stdout.readline().strip() for w in workers)
    dirs = claim_dirs()
    for w in workers:
        w.stdin.close()
    return said, dirs, [w.wait(30) for w in workers]


def main():
    how = sys.argv[1]
    said, dirs, codes = by_subprocess() if how == "subprocess" else by_multiprocessing(how)
    if said != ["busy"] * (WORKERS - 1) + ["took"] or len(dirs) != 1 or codes != [0] * WORKERS:
        print(f"{how}: the workers said {said}, {len(dirs)} claim directories, exit codes {codes}", file=sys.stderr)
        return 1
    print("ok", how)
    return 0


if __name__ == "__main__":
    sys.exit(main())
