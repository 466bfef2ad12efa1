"""The planners and derived features as they were before their compiled versions.

Test oracles only: the tests check, on many random states, that the shipped code gives
bit-for-bit the same features, costs and actions as these plain-numpy versions. Each is
named after the module it pins, ``<game>_<module>.py`` for ``<game>_env/<module>.py`` and the
compiled kernels behind it (docs/CONTRACT.md, "Module names in a game package").
"""
