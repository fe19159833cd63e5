"""Course authors' tools: export of the learner kit, ./lab new, benchmarks."""
