"""Who may depend on which package of common/: their default visibility.

Bazel enforces it: a target outside these packages that names one of their
targets does not build. common/core is public: it is what a learner's code
links with. The labels of tests/ and bench/ name packages of the instructors'
repository; the learner kit has neither, and Bazel accepts a visibility to a
package that does not exist.
"""

# Test support (all testonly, so no lab library either): the labs' tests and
# the hidden tests, and the grading boundary's result stream.
TESTING = [
    "//common/grading:__pkg__",
    "//labs:__subpackages__",
    "//tests:__subpackages__",
]

# The lab programs' support: the labs (their programs), the hidden tests and
# the benchmarks.
PROGRAMS = [
    "//bench:__pkg__",
    "//labs:__subpackages__",
    "//tests:__subpackages__",
]

# The grading boundary: only the grader's targets, which common/lab.bzl
# declares in tests/NN_name/ (the remote variants of the public tests reach
# it through //tests/NN_name:remote_test_support).
GRADING = [
    "//common/grading:__pkg__",
    "//tests:__subpackages__",
]
