"""Tune a strategy's parameters with optuna, on paired deals, and confirm the best setting on fresh ones.

Every trial plays the same deals with the same strategy seeds (common random numbers), so two settings
differ only by how they play, and a difference of a few deals is a real one. A trial plays its deals in
`STEPS` rounds, each a run of the project's runner (`studies.runner.run`), so its rows are stored and
reused like any other run's: a setting tried twice, or again by ``simulate``, plays nothing the second
time. After each round the trial reports its win rate so far to optuna's pruner (a median pruner),
which stops a setting that falls behind the others at the same point.

The study is kept beside the results, in ``STORE/_tuning/<name>.journal`` (optuna's journal storage on
a file, locked with a lock file, never a symbolic link), under a name made of everything that decides
its trials' values (the rules, the strategy and its fixed parameters, the searched space, the deals
and seeds): the same command after a kill continues the study, counting the trials that finished
(complete or pruned) towards ``trials``; a trial the kill cut short is left as it was recorded, not
counted, and its setting is tried again first. The first trial of a study is the strategy's own setting,
so the best found is never below it on the tuning deals.

The best setting is then confirmed on ``confirm`` fresh deals that follow the tuning deals: the tuned
and the default setting on the same deals, their win rates with Wilson intervals, and McNemar's
exact test on the deals only one of them won.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sim.rules import Rules
from studies import nofollow
from studies.files import DamagedFileWarning, StoreError, atomic_write_bytes
from studies.paired import Player
from studies.search_space import Dimension, SearchSpace
from studies.spec import RunSpec, RunSummary
from studies.stats import paired_comparison, win_rate_interval
from studies.store import Store

STEPS = 5
"""Rounds of a trial's deals: the pruner sees the win rate after each."""
TUNING_DIR = "_tuning"
"""The store's folder of studies (a name starting with ``_``, which the store's readers and Parquet readers skip)."""
STARTUP_TRIALS = 4
"""Trials sampled at random before optuna's TPE sampler models the results."""


@dataclass(frozen=True)
class TuneSpec:
    """A tuning study: what is searched, on which deals, how many trials, and the fresh deals that confirm it."""

    rules: Rules
    space: SearchSpace
    trials: int
    deals: int
    first: int = 1
    seed: int = 0
    source: str = "default"
    confirm: int = 0

    @property
    def name(self) -> str:
        """The study's name: a digest of everything that decides its trials' values (not ``trials`` or ``confirm``),
        a plug-in's code digest included."""
        what = {"rules": self.rules.fingerprint, "strategy": self.space.prefix,
                "identity": self.space.strategy.identity if not self.space.dimensions else None,
                "fixed": {k: repr(v) for k, v in sorted(self.space.fixed.items())},
                "space": [[d.name, d.describe()] for d in self.space.dimensions],
                "deals": self.deals, "first": self.first, "seed": self.seed, "source": self.source, "steps": STEPS}
        code = self.space.strategy.code_digest
        if code is not None:  # a plug-in's trials are its code's: an edited plug-in starts a study of its own
            what["code"] = code
        digest = hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:16]
        return f"{self.space.strategy.name.replace(':', '.')}-{digest}"  # a file name: no colon

    def rounds(self) -> list[tuple[int, int]]:
        """The tuning deals as `STEPS` (or fewer) consecutive (first, count) rounds."""
        size = math.ceil(self.deals / STEPS)
        return [(self.first + i, min(size, self.deals - i)) for i in range(0, self.deals, size)]


@dataclass
class Side:
    """One setting on the confirmation deals."""

    spec: str
    wins: int
    deals: int

    def to_json(self) -> dict[str, Any]:
        low, high = win_rate_interval(self.wins, self.deals)
        return {"spec": self.spec, "wins": self.wins, "deals": self.deals, "win_rate": self.wins / self.deals,
                "ci_low": low, "ci_high": high}


@dataclass
class Confirmation:
    """The tuned and the default setting on the same fresh deals, compared with McNemar's exact test."""

    first: int
    deals: int
    tuned: Side
    default: Side
    only_tuned: int
    only_default: int
    difference: float
    low: float
    high: float
    p_value: float

    def to_json(self) -> dict[str, Any]:
        return {"first": self.first, "deals": self.deals, "tuned": self.tuned.to_json(), "default": self.default.to_json(),
                "only_tuned": self.only_tuned, "only_default": self.only_default, "difference": self.difference,
                "ci_low": self.low, "ci_high": self.high, "p_value": self.p_value}


@dataclass
class TuneResult:
    """A finished study: its best setting, its trials, and the confirmation (None with ``confirm`` 0)."""

    study: Any
    journal: Path
    best: str
    best_value: float
    best_params: dict[str, Any]
    confirmation: Confirmation | None
    summaries: list[RunSummary] = field(default_factory=list)
    ignored: dict[int, str] = field(default_factory=dict)
    """Trials of the journal that do not count (`trial_problem`), by number, with why."""

    @property
    def trials(self) -> list[Any]:
        """The study's trials that count: those in `ignored` left out."""
        return [t for t in self.study.trials if t.number not in self.ignored]

    def counts(self) -> dict[str, int]:
        """Trials by state (complete, pruned, fail, running) as the study records them, and those ignored."""
        out: dict[str, int] = {}
        for t in self.trials:
            out[t.state.name.lower()] = out.get(t.state.name.lower(), 0) + 1
        if self.ignored:
            out["ignored"] = len(self.ignored)
        return out

    def to_json(self) -> dict[str, Any]:
        return {"best": self.best, "best_value": self.best_value,
                "params": {k: v for k, v in self.best_params.items()}, "study": str(self.journal),
                "trials": self.counts(), "confirm": None if self.confirmation is None else self.confirmation.to_json()}


def open_study(tune: TuneSpec, store: str | Path) -> tuple[Any, Path]:
    """The study for ``tune`` in ``store`` (made, or loaded to continue it) and its journal file."""
    import optuna
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend, JournalFileOpenLock

    st = Store.open(store, create=True)
    folder = st.path / TUNING_DIR
    journal = folder / f"{tune.name}.journal"
    try:
        nofollow.make_folder(st.path, folder)
        if nofollow.exists(st.path, journal):  # a link there is refused, and so is anything but a file
            os.close(nofollow.open_fd(st.path, journal, os.O_RDONLY))
            if not journal.is_file():
                raise StoreError(f"{journal} is not a file; a tuning study's journal is a plain file")
    except OSError as exc:
        raise StoreError(f"cannot keep the tuning study in {folder}: {exc.strerror or exc}") from None
    lock = JournalFileOpenLock(str(journal))
    if nofollow.exists(st.path, journal):
        _keep_sound_prefix(st.path, journal, lock)
    storage = JournalStorage(JournalFileBackend(str(journal), lock_obj=lock))
    try:
        finished = _finished(optuna.load_study(study_name=tune.name, storage=storage).trials) \
            if tune.name in optuna.get_all_study_names(storage) else 0
        sampler = optuna.samplers.TPESampler(seed=int(tune.name.rpartition("-")[2], 16) % 2**31 + finished,
                                             n_startup_trials=STARTUP_TRIALS)
        pruner = optuna.pruners.MedianPruner(n_startup_trials=STARTUP_TRIALS // 2, n_warmup_steps=1)
        study = optuna.create_study(study_name=tune.name, storage=storage, sampler=sampler, pruner=pruner,
                                    direction="maximize", load_if_exists=True)
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:  # records optuna cannot replay
        raise StoreError(f"the tuning journal {journal} holds records optuna cannot replay ({type(exc).__name__}: "
                         f"{str(exc)[:80]}); move it aside to start the study again (its runs stay in the store)") from None
    if not study.trials:
        study.set_user_attr("strategy", tune.space.default_spec)
        study.set_user_attr("space", {d.name: d.describe() for d in tune.space.dimensions})
        default = _encoded(tune.space)
        if default is not None:  # the default setting first: the best is never below it on the tuning deals
            study.enqueue_trial(default)
    _requeue_interrupted(study, tune)
    return study, journal


def _keep_sound_prefix(root: Path, journal: Path, lock: Any) -> None:
    """Keep of ``journal`` only its lines up to the first that is not a whole JSON record (a last line cut short by a
    kill or a full disk, which the next append would glue onto; a line that is not JSON): the rest is moved to a file
    beside it (``.damaged-<time>``) and named in one warning. Done under the journal's own lock, so a writer's append
    is never mistaken for damage. Later records depend on earlier ones (trial numbers), so nothing after a damaged
    line is kept; the trials lost are played again, from the store's rows where those are kept."""
    lock.acquire()
    try:
        with nofollow.open_read(root, journal) as fh:
            data = fh.read()
        sound = 0
        for line in data.splitlines(keepends=True):
            if not line.endswith(b"\n") or not _is_record(line):
                break
            sound += len(line)
        if sound == len(data):
            return
        aside = journal.with_name(f"{journal.name}.damaged-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}")
        atomic_write_bytes(root, aside, data[sound:])
        fd = nofollow.open_fd(root, journal, os.O_WRONLY)
        try:
            os.ftruncate(fd, sound)
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise StoreError(f"cannot repair the tuning journal {journal}: {exc.strerror or exc}") from None
    finally:
        lock.release()
    lines = data[sound:].count(b"\n") + (not data.endswith(b"\n"))
    warnings.warn(f"{journal}: its records from byte {sound:,} on ({lines} line(s)) are not whole JSON records (cut "
                  f"short by a kill or a full disk, or written by hand); moved to {aside.name}, the study continues "
                  "from the records before them", DamagedFileWarning, stacklevel=2)


def _is_record(line: bytes) -> bool:
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return False
    return isinstance(record, dict) and isinstance(record.get("op_code"), int)


def trial_problem(spec: TuneSpec, trial: Any) -> str | None:
    """Why a trial of the journal does not count for ``spec`` (None when it does): its parameters must be inside the
    searched space, its spec the one they make, and a completed trial's value a win rate its deals can have."""
    from optuna.trial import TrialState

    dims = {d.name: d for d in spec.space.dimensions}
    if set(trial.params) != set(dims) and trial.state in (TrialState.COMPLETE, TrialState.PRUNED):
        return "its parameters are not the searched ones"
    values = {}
    for name, raw in trial.params.items():
        d = dims.get(name)
        if d is None:
            return f"it sets {name}, which is not searched"
        if d.choices is not None:
            if not isinstance(raw, int | float) or raw != int(raw) or not 0 <= raw < len(d.choices):
                return f"its {name} is choice {raw!r}, not one of the {len(d.choices)} searched"
            values[name] = d.choices[int(raw)]
        elif not isinstance(raw, int | float) or not d.low <= raw <= d.high or (d.kind is int and raw != int(raw)):
            return f"its {name} {raw!r} is outside the searched {d.describe()}"
        else:
            values[name] = d.kind(raw)
    if trial.state not in (TrialState.COMPLETE, TrialState.PRUNED):
        return None
    expected = spec.space.spec(values) if len(values) == len(dims) else None
    if trial.user_attrs.get("spec") != expected:
        return f"its spec {str(trial.user_attrs.get('spec'))[:60]!r} is not the one its parameters make"
    if trial.state == TrialState.COMPLETE:
        wins = (trial.value if isinstance(trial.value, int | float) else math.nan) * spec.deals
        if not (0 <= wins <= spec.deals and math.isclose(wins, round(wins), abs_tol=1e-6)):
            return f"its value {trial.value!r} is no win rate of {spec.deals:,} deals"
    return None


def _encoded(space: SearchSpace) -> dict[str, Any] | None:
    """The strategy's own setting (as named) as a trial's parameters, or None when the search leaves it out."""
    out: dict[str, Any] = {}
    for d in space.dimensions:
        value = space.strategy.params[d.name]
        if d.choices is not None:
            if value not in d.choices:
                return None
            out[d.name] = d.choices.index(value)
        elif d.low <= value <= d.high:
            out[d.name] = value
        else:
            return None
    return out


def _requeue_interrupted(study: Any, spec: TuneSpec) -> None:
    """Enqueue once more the setting of each trial an interruption cut short (left running by a kill, or failed
    by Ctrl-C), so that a resumed study tries it first rather than losing it."""
    from optuna.trial import TrialState

    done = set(study.user_attrs.get("requeued", []))
    cut = [t for t in study.trials if t.state in (TrialState.RUNNING, TrialState.FAIL) and t.number not in done
           and set(t.params) == {d.name for d in spec.space.dimensions} and trial_problem(spec, t) is None]
    for t in cut:
        study.enqueue_trial(t.params, skip_if_exists=False)
    if cut:
        study.set_user_attr("requeued", sorted(done | {t.number for t in cut}))


def _finished(trials: Sequence[Any]) -> int:
    from optuna.trial import TrialState

    return sum(t.state in (TrialState.COMPLETE, TrialState.PRUNED) for t in trials)


def _suggest(trial: Any, dim: Dimension) -> Any:
    if dim.choices is not None:
        index = trial.suggest_categorical(dim.name, list(range(len(dim.choices))))
        return dim.choices[index]
    if dim.kind is int:
        return trial.suggest_int(dim.name, int(dim.low), int(dim.high), log=dim.log)
    return trial.suggest_float(dim.name, float(dim.low), float(dim.high), log=dim.log)


def tune(spec: TuneSpec, store: str | Path, player: Player, on_trial: Callable[[Any, str], None] | None = None) -> TuneResult:
    """Run ``spec``'s study in ``store`` until ``spec.trials`` trials have finished, then confirm its best setting."""
    import optuna

    study, journal = open_study(spec, store)
    summaries: list[RunSummary] = []

    def objective(trial: Any) -> float:
        values = {d.name: _suggest(trial, d) for d in spec.space.dimensions}
        strategy = spec.space.spec(values)
        trial.set_user_attr("spec", strategy)
        wins = played = 0
        for step, (first, count) in enumerate(spec.rounds()):
            summary, _ = player(RunSpec(spec.rules, strategy, count, first, spec.seed, spec.source))
            summaries.append(summary)
            wins, played = wins + summary.wins, played + count
            trial.report(wins / played, step)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return wins / played

    def callback(study: Any, trial: Any) -> None:
        if on_trial is not None:
            on_trial(trial, trial.user_attrs.get("spec", "?"))

    ignored = _ignored(spec, study.trials)
    todo = spec.trials - _finished([t for t in study.trials if t.number not in ignored])
    if todo > 0:
        study.optimize(objective, n_trials=todo, callbacks=[callback], catch=())
    ignored = _ignored(spec, study.trials)
    best_trial, best_value = _verified_best(spec, [t for t in study.trials if t.number not in ignored], player, ignored)
    if ignored:
        shown = "; ".join(f"trial {n}: {why}" for n, why in sorted(ignored.items())[:3])
        warnings.warn(f"{journal}: {len(ignored)} trial(s) ignored, not counted as played by this study ({shown}"
                      f"{'; ...' if len(ignored) > 3 else ''})", DamagedFileWarning, stacklevel=2)
    best = best_trial.user_attrs["spec"]
    params = {d.name: _decoded(d, best_trial.params[d.name]) for d in spec.space.dimensions}
    confirmation = confirm(spec, best, player) if spec.confirm > 0 else None
    return TuneResult(study, journal, best, best_value, params, confirmation, summaries, ignored)


def _ignored(spec: TuneSpec, trials: Sequence[Any]) -> dict[int, str]:
    """The trials that do not count (`trial_problem`), by number, with why."""
    found = {t.number: trial_problem(spec, t) for t in trials}
    return {n: why for n, why in found.items() if why is not None}


def _verified_best(spec: TuneSpec, trials: Sequence[Any], player: Player, ignored: dict[int, str]) -> tuple[Any, float]:
    """The completed trial with the highest value whose value its deals' rows give again: each candidate's rounds
    are played through ``player`` (read back from the store, where its rows are; played again where not), and one
    whose recorded value disagrees is added to ``ignored`` and the next is tried."""
    from optuna.trial import TrialState

    done = sorted((t for t in trials if t.state == TrialState.COMPLETE), key=lambda t: (-t.value, t.number))
    for t in done:
        wins = sum(player(RunSpec(spec.rules, t.user_attrs["spec"], count, first, spec.seed, spec.source))[0].wins
                   for first, count in spec.rounds())
        if round(t.value * spec.deals) == wins:
            return t, wins / spec.deals
        ignored[t.number] = f"its value {t.value:.2%} is not the {wins / spec.deals:.2%} its deals give"
    raise StoreError(f"no completed trial of the study counts ({len(ignored)} ignored); run tune again with more --trials")


def _decoded(dim: Dimension, value: Any) -> Any:
    """A trial's recorded value of ``dim`` as the parameter's value (choices are recorded by index)."""
    return dim.choices[value] if dim.choices is not None else value


def confirm(spec: TuneSpec, best: str, player: Player) -> Confirmation:
    """``best`` against the default setting on the ``spec.confirm`` deals after the tuning deals."""
    first = spec.first + spec.deals
    tuned_summary, tuned = player(RunSpec(spec.rules, best, spec.confirm, first, spec.seed, spec.source))
    default_summary, default = player(RunSpec(spec.rules, spec.space.default_spec, spec.confirm, first, spec.seed, spec.source))
    c = paired_comparison(tuned, default)
    return Confirmation(first, spec.confirm, Side(best, tuned_summary.wins, spec.confirm),
                        Side(spec.space.default_spec, default_summary.wins, spec.confirm),
                        c.only_first, c.only_second, c.difference, c.low, c.high, c.p_value)
