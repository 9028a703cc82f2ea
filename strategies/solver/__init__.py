"""The solver: a depth-first search that decides whether a deal can be won, and the strategy that plays its line.

`strategy` is the strategy and its compiled policy; `search` the search itself;
`hash` the position keys and transposition table; `order` the move ordering;
`safe` the moves that can be made without search; `dead` the proofs that a
position is lost; `line` the winning line replayed from the search; `layers`
the layered prover for what the search leaves unknown, on the exact position
keys of `codec`.
"""
