"""`python -m sim` runs the `bakers-dozen` command."""

from sim.cli import main

main()
