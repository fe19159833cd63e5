"""What a learner runs from the kit: status, watch, hint, the provisional grade.

The learner's kit ships this package and the modules it imports (course/kit.py
decides by following the imports)."""
