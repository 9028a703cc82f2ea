"""`python -m bakers_dozen` runs the `bakers-dozen` command (through `bakers_dozen.start`, which names a missing
dependency in one line)."""

from bakers_dozen.start import main

main()
