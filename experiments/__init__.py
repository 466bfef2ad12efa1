"""Analyses and one-off experiments: run from a clone of the repository, not installed.

Each module is runnable (``python -m experiments.NAME --help``) and imports the product
packages; no product package imports this one. ``tests/test_experiments.py`` runs each tiny.
"""
