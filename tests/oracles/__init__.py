"""The planners and derived features as they were before their compiled versions.

Test oracles only: the tests check, on many random states, that the shipped code gives
bit-for-bit the same features, costs and actions as these plain-numpy versions.
"""
