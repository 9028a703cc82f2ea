"""The smallest plug-in strategy: play a card home when one can go, else a random legal move."""

from strategies.base import Strategy


class HomeThenRandom(Strategy):
    """Home first; otherwise one of the legal moves, drawn from the deal's random stream."""

    description = "example plug-in: home first, else a random move"

    def choose(self, view, moves):
        home = [m for m in moves if m.to_foundation]
        if home:
            return home[0]
        return moves[self.rng.below(len(moves))]
