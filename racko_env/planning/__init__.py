"""Rack-O's planners: the numpy building blocks the heuristic agents and the learners' derived
features share (``plan``), their compiled kernels (``plan_kernels``, ``sequence_kernel``,
``lis_kernel``), and the derived features themselves (``features``, ``feature_kernels``).

The rules, the state, the core and the env live one level up; nothing there imports this package
except the descriptor, which names the features module for the learners."""
