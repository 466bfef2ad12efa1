"""Least Score's planners: the numpy building blocks the heuristic agents and the learners'
derived features share (``plan``), ``leastscore:dp``'s value tables (``dp``), their compiled
kernels (``plan_kernels``, ``feature_kernels``), and the derived features (``features``).

The rules, the state, the core and the env live one level up; nothing there imports this package
except the descriptor, which names the features module for the learners."""
