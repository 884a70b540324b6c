"""`python -m observe`: the `observe` command."""

from observe.cli import main

main()
