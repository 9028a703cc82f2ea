"""Test vectors from docs/rules.md, section "Test vectors", shared by several test modules."""

PYSOL_DEAL_24 = """KD 8H AC AS
KC 3D 8C 2S
QD TD 7D 9S
2H JH 6S QH
KH 3S 9D 2C
JD 3H TH 7S
7C QS JC AH
8D 4D 6H 7H
6D AD 3C 2D
KS TS 9C 5D
4H TC 6C QC
4S 5C 5S 5H
8S 9H JS 4C
"""
"""PySolFC's Baker's Dozen deal 24, one pile per line bottom to top, as `deal` prints it."""
