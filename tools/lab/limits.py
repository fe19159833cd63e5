"""Every limit the grader enforces, named once.

Times are wall-clock seconds unless they say CPU. The rubric
("limits", in the instructors' repository) may override the run limits per
lab; the build limits are the same for everyone.
"""

# Compiling and linking one learner file (the compiler and linker run as an
# unprivileged user, see grader/sandbox.py).
COMPILE_SECONDS = 60            # wall clock: a compiler reading a FIFO or a terminal stops here
COMPILE_CPU_SECONDS = 60
COMPILE_MEMORY_MB = 2048        # address space of cc1plus, as, ld
COMPILE_FILE_MB = 64            # largest file the compiler may write (a 1 GiB array stops here)
COMPILE_PROCESSES = 64          # gcc, cc1plus, as, collect2, ld
LINK_SECONDS = 60

# One job (one lab of one submission: compile, link, tests, one at a time) in
# its own cgroup, where cgroup v2 offers memory, pids and cpu (grader/cgroups.py):
# real memory, not address space, of everything the job runs, the trusted
# test process included; every job has the same cpu weight.
JOB_MEMORY_MB = 4096
JOB_PROCESSES = 128

# A learner's process while the tests call it (overridable per lab: rubric "limits").
RUN_DEFAULTS = {
    "test_seconds": 10,         # one call into the learner's code
    "lab_seconds": 120,         # all of one lab's tests together
    "memory_mb": 2048,          # address space of the learner's process
}
RUN_CPU_SECONDS = 600           # CPU of one learner process (the wall clock stops it first)
RUN_PROCESSES = 16              # processes and threads of the learner's user
RUN_OPEN_FILES = 32
TIMEOUTS_PER_LAB = 2            # after this many timed-out calls, the lab's other calls fail at once

# The trusted test process (our code) gets the lab's memory limit plus this
# much for itself (goldens, GoogleTest): it also runs the reference code that
# answers the learner's calls to earlier labs. Those calls are bounded
# together, not by this: only the lab's call surface is answered, and all the
# calls back of one call share its memory, CPU and deadline (common/grading/remote.h,
# DeclareCallSurface).
TRUSTED_EXTRA_MEMORY_MB = 512

# Submissions.
SOURCE_BYTES = 256 << 10        # a learner file larger than this is ignored
SUBMISSION_ENTRIES = 10000      # files and directories looked at in one submission
SUBMISSION_DEPTH = 32           # directories deeper than this are not walked
LISTED_IGNORED = 100            # ignored files named in a report

# What the grader prints or stores of text that came from a submission.
MESSAGE_CHARS = 400             # one failure message on the scoreboard
REPORT_MESSAGE_CHARS = 2000     # one failure message in the JSON report
