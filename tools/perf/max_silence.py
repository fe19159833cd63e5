#!/usr/bin/env python3
"""The longest silence of a command: how long it printed nothing while it worked.

    tools/perf/max_silence.py ./lab status
    tools/perf/max_silence.py --log /tmp/status.log ./lab grade

Runs the command with its stdout and stderr on one pipe (not a terminal, as in
a log or CI), stamps every line with the time since the start, and prints at
the end the total time, the number of lines and the three longest gaps between
two lines (or the start and the first line, or the last line and the end),
with the line that ended each. The goal of every ./lab command: no gap above
30 s while it works.
"""
import argparse
import subprocess
import sys
import time


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--log", help="also write the stamped lines to this file")
    p.add_argument("command", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    if not args.command:
        p.error("give a command")
    t0 = time.time()
    proc = subprocess.Popen(args.command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, text=True, errors="replace", bufsize=1)
    log = open(args.log, "w") if args.log else None
    last, gaps, n = t0, [], 0
    for line in proc.stdout:
        now = time.time()
        gaps.append((now - last, line.rstrip()[:100]))
        last = now
        n += 1
        stamped = "[%7.1f] %s" % (now - t0, line.rstrip())
        print(stamped, flush=True)
        if log:
            log.write(stamped + "\n")
    rc = proc.wait()
    end = time.time()
    gaps.append((end - last, "(the end)"))
    summary = ["%s: exit %d after %.1f s, %d lines; longest silences:" % (
        " ".join(args.command), rc, end - t0, n)]
    for gap, line in sorted(gaps, reverse=True)[:3]:
        summary.append("  %6.1f s before: %s" % (gap, line))
    for s in summary:
        print(s)
        if log:
            log.write(s + "\n")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
