"""Grading a submission: the submission, the build of the learner's file, the
object check, the sandbox and jail, the runner, the suite of trusted tests, the
scores."""
