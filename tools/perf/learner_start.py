#!/usr/bin/env python3
"""Side by side: the time to start a learner's process, the way the grader
did before issue 39 (chroot --userspec, no Landlock) and the way it does now
(the launcher, launch.cc: chroot, the job's uid, a Landlock domain), each
running `true` in a jail of its own, alternated, as root.

    sudo /usr/bin/python3 tools/perf/learner_start.py [--runs N]

A learner's process is started once per lab and again after each crash or
timeout, and the job's reference process once per lab that calls back:
the difference is paid about twice per lab.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lab"))

from grader import jail, learner_jail, sandbox  # noqa: E402
from grader.uids import claim_uid  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--runs", type=int, default=40)
    args = p.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("learner_start.py: run as root (the jail changes user)")
    d = tempfile.mkdtemp(prefix="mha-start-", dir="/var/tmp")
    os.chmod(d, 0o755)
    try:
        lib = learner_jail.prepare_libroot(d, [shutil.which("true")])
        shutil.copy(shutil.which("true"), os.path.join(lib, "probe"))
        uid = claim_uid()
        launcher = learner_jail.build_launcher(d)
        ways = [("chroot --userspec (before)", sandbox.chroot_as_user(uid, lib) + ["/probe"]),
                ("launch.cc, Landlock ABI %d (now)" % jail.landlock_abi(),
                 learner_jail.launch(launcher, lib, uid, True, jail.landlock_abi() > 0,
                                     ["/probe"]))]
        times = {name: [] for name, _ in ways}
        for _ in range(args.runs):
            for name, argv in ways:
                t = time.perf_counter()
                if subprocess.run(argv).returncode != 0:
                    raise SystemExit("%s failed: %s" % (name, argv))
                times[name].append(time.perf_counter() - t)
        medians = []
        for name, ts in times.items():
            ts.sort()
            medians.append(ts[len(ts) // 2])
            print("%-44s median %6.1f ms   min %6.1f ms" % (name, 1000 * medians[-1],
                                                            1000 * ts[0]))
        print("ratio %.1fx: %+.0f ms per process start (load average %.1f)" % (
            medians[1] / medians[0], 1000 * (medians[1] - medians[0]), os.getloadavg()[0]))
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
