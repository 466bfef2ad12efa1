"""``python -m deckgym``: the ``deckgym`` command line."""

from deckgym.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
