"""The notebook API (`bakers_dozen.api`) answers bad input with the toolkit's one-line `UserError`, never a
`TypeError`, `AttributeError` or `OSError`: an unknown keyword, None where a game is expected, an output path that is
a folder or lies in a folder that does not exist."""

from __future__ import annotations

import pytest

from bakers_dozen import api
from sim.errors import UserError


@pytest.mark.parametrize("call", [
    lambda tmp: api.simulate("bakers-dozen", "greedy", deals=5, no_such_option=1),
    lambda tmp: api.play("bakers-dozen", 1, "greedy", no_such_option=2),
    lambda tmp: api.deal("bakers-dozen", 1, no_such_option=3),
    lambda tmp: api.analyse(api.deal(), budget=5),
    lambda tmp: api.read_store(tmp / "store", no_such_filter=1),
], ids=["simulate", "play", "deal", "analyse", "read_store"])
def test_an_unknown_keyword_is_a_user_error(call, tmp_path):
    with pytest.raises(UserError, match="no_such|budget"):
        call(tmp_path)


@pytest.mark.parametrize("call", [
    lambda tmp: api.analyse(None),
    lambda tmp: api.replay(None, tmp / "game.html"),
    lambda tmp: api.draw(None),
    lambda tmp: api.deal(None),
], ids=["analyse", "replay", "draw", "deal"])
def test_none_for_a_game_is_a_user_error(call, tmp_path):
    with pytest.raises(UserError):
        call(tmp_path)


@pytest.mark.parametrize("where", ["folder", "missing folder"])
@pytest.mark.parametrize("what", ["replay", "svg"])
def test_an_output_path_that_cannot_be_a_file_is_a_user_error(what, where, tmp_path):
    path = tmp_path if where == "folder" else tmp_path / "missing" / f"out.{'html' if what == 'replay' else 'svg'}"
    game = api.deal()
    with pytest.raises(UserError, match="folder"):
        if what == "replay":
            api.replay(game, path)
        else:
            api.draw(game).save(path)
    assert list(tmp_path.iterdir()) == []
