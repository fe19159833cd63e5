"""The suite's own checks (./lab test): self-test, hostile submissions, mutants,
the kit and new-lab checks, consistency of the registry and the lessons."""
