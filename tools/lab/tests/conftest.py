"""pytest set-up: the grader's modules are imported from tools/lab/."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
