"""What graders and learners read: failure messages, the per-learner report,
feedback, the rubric, the class summary and the HTML report."""
