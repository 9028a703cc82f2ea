"""`python -m bakers_dozen` runs the `bakers-dozen` command."""

from bakers_dozen.cli import main

main()
