"""The constants the Rack-O planner's numpy code (``racko_env.planning.plan``) and its compiled kernels
(``plan_kernels``, ``sequence_kernel``, ``feature_kernels``) share. It imports nothing, so
every one of them can import it without an import circle."""

SLOTS = 10  # slots of a rack (R1)
BIG = 1.0e4  # "impossible" cost (finite, so sums and differences stay well defined)
INF = 1.0e6  # unreachable DP state
