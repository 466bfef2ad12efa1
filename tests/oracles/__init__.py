"""The planners and derived features as they were before their compiled versions.

Test oracles only: the tests check, on many random states, that the shipped code gives
bit-for-bit the same features, costs and actions as these plain-numpy versions. Each is
named after the module it pins, ``<game>_<module>.py`` for ``<game>_env/planning/<module>.py`` and the
compiled kernels behind it (docs/CONTRACT.md, "Module names in a game package"). The package
ships only the compiled formulation of each; each oracle's docstring says what it pins and why
it cannot be the shipped code itself. The harness of the rules oracle (the OpenSpiel reference
against the batched core) ships as ``deckgym.openspiel.oracle``, so that ``check_game`` runs it.
"""
