"""Progress written to a log: a plain line every few minutes, nothing for a short run."""

from __future__ import annotations

import io

from studies.progress import LineProgress, NullProgress, RichProgress, make_progress


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _lines(buf: io.StringIO) -> list[str]:
    return buf.getvalue().splitlines()


def test_a_short_run_writes_nothing_and_a_long_one_a_line_per_interval():
    buf, clock = io.StringIO(), Clock()
    log = LineProgress(file=buf, interval=300, clock=clock)
    log.start(10_000, 2_000, 1_900, "bakers-dozen / solver")
    clock.now += 299
    log.advance(1_000, 990)
    assert buf.getvalue() == ""
    clock.now += 1  # 300 s after the start: 1,000 played in 300 s
    log.advance(1_000, 1_000)
    (line,) = _lines(buf)
    # 4,000 done of 10,000; 2,000 played in 300 s is 6.7/s, 6,000 left at 6.67/s is 900 s
    assert line.endswith("bakers-dozen / solver: 4,000/10,000 deals, 6.7/s, ETA 0:15:00, win 97.25%"), line
    clock.now += 100
    log.advance(1_000, 1_000)
    assert len(_lines(buf)) == 1  # the next line waits a whole interval
    clock.now += 200
    log.advance(0, 0)
    assert len(_lines(buf)) == 2 and "5,000/10,000" in _lines(buf)[1]
    log.stop()
    clock.now += 1_000
    log.advance(1, 1)
    assert len(_lines(buf)) == 2


def test_notes_are_written_at_once_as_plain_text_and_labels_as_written():
    buf, clock = io.StringIO(), Clock()
    log = LineProgress(file=buf, interval=10, clock=clock)
    log.note("[yellow]a worker died (\\[x]); replaying its chunk\x1b")
    log.start(5, 0, 0, "v[/]\x1b[31m / [bold]s")
    clock.now += 10
    log.advance(1, 1)
    first, second = _lines(buf)
    assert first.endswith(" a worker died ([x]); replaying its chunk\\x1b")
    assert "v[/]\\x1b[31m / [bold]s: 1/5 deals, 0.1/s" in second and "\x1b" not in buf.getvalue()


def test_make_progress_picks_the_display_for_where_standard_error_goes(monkeypatch):
    monkeypatch.setattr("sys.stderr", io.StringIO())  # not a terminal
    assert isinstance(make_progress(), LineProgress)
    assert isinstance(make_progress(quiet=True), NullProgress)
    assert isinstance(make_progress(force=True), RichProgress)
