"""A tuning journal that is damaged or forged: a trial counts only if it is inside the searched space, its value is a
win rate its deals can have and the store's rows give it again; a cut-short or non-JSON line is set aside. Each is
one warning or one line, never a traceback, and never the tuned best."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import optuna
import pytest
from click.testing import CliRunner

from bakers_dozen.cli import main
from studies.files import DamagedFileWarning

SMALL = ["heuristic", "--param", "preset=balanced,cautious", "--param", "allow_dig=false,true", "--param", "guard=cycle",
         "--deals", "50", "--confirm", "0", "--jobs", "1", "--store", "st", "--out", "rep", "--json", "-q"]


def tune(*extra: str):
    return CliRunner().invoke(main, ["tune", *SMALL, *extra])


@pytest.fixture
def journal(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    done = tune("--trials", "2")
    assert done.exit_code == 0, done.output
    return Path(json.loads(done.output.strip().splitlines()[-1])["study"])


def _study(journal: Path):
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend, JournalFileOpenLock

    storage = JournalStorage(JournalFileBackend(str(journal), lock_obj=JournalFileOpenLock(str(journal))))
    (name,) = optuna.get_all_study_names(storage)
    return optuna.load_study(study_name=name, storage=storage)


def _forge(journal: Path, params: dict, value: float, spec: str | None) -> None:
    dists = {name: optuna.distributions.CategoricalDistribution(list(range(5))) for name in params}
    _study(journal).add_trial(optuna.trial.create_trial(params=params, distributions=dists, value=value,
                                                        user_attrs={} if spec is None else {"spec": spec}))


@pytest.mark.parametrize("params, value, spec, why", [
    ({"preset": 0, "allow_dig": 0}, 5.0, "solver:nodes=1000", "is not the one its parameters make"),
    ({"preset": 0, "allow_dig": 0}, 5.0, "heuristic:allow_dig=false,guard=cycle,preset=balanced", "no win rate"),
    ({"preset": 0, "allow_dig": 0}, 0.98, "heuristic:allow_dig=false,guard=cycle,preset=balanced", "its deals give"),
    ({"preset": 4, "allow_dig": 0}, 0.98, "heuristic:allow_dig=false,guard=cycle,preset=balanced", "choice 4"),
    ({"preset": 0, "allow_dig": 0}, 0.98, None, "is not the one its parameters make"),
], ids=["foreign spec", "impossible value", "rows disagree", "choice outside", "no spec"])
def test_a_forged_trial_is_named_and_never_the_best(journal, params, value, spec, why):
    before = json.loads(tune("--trials", "2").output.strip().splitlines()[-1])
    _forge(journal, params, value, spec)
    with pytest.warns(DamagedFileWarning, match=why):
        again = tune("--trials", "2")
    assert again.exit_code == 0, again.output
    after = json.loads(again.output.strip().splitlines()[-1])
    assert (after["best"], after["best_value"]) == (before["best"], before["best_value"])
    assert after["trials"]["ignored"] == 1
    assert after["trials"]["complete"] + after["trials"].get("pruned", 0) == 2  # the forged one is not counted


@pytest.mark.parametrize("damage", ["cut short", "not JSON"])
def test_a_damaged_journal_line_is_set_aside_and_the_study_goes_on(journal, damage):
    data = journal.read_bytes()
    if damage == "cut short":  # a kill or a full disk in the middle of an append
        journal.write_bytes(data + b'{"op_code":4,"worker_id":"x","study_id":0,"datet')
    else:
        lines = data.splitlines(keepends=True)
        journal.write_bytes(b"".join(lines[:-3]) + b"this is not JSON\n" + b"".join(lines[-3:]))
    for _ in range(2):  # the next append does not glue onto the damage, and a later tune reads the journal
        with pytest.warns(DamagedFileWarning) if _ == 0 else _nothing():
            done = tune("--trials", "3")
        assert done.exit_code == 0, done.output
        assert "Traceback" not in done.output
    assert len(list(journal.parent.glob(journal.name + ".damaged-*"))) == 1
    assert json.loads(done.output.strip().splitlines()[-1])["trials"]["complete"] >= 1


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


CHILD = """
import sys
import studies.paired as paired
from studies.files import KeyBusyError, StoreFullError
def refused(*args, **kwargs):
    raise {error}("the run key is busy" if {error} is KeyBusyError else "disk full: writing a chunk")
paired.run = refused
from bakers_dozen.cli import main
main(sys.argv[1:])
"""


@pytest.mark.parametrize("error", ["KeyBusyError", "StoreFullError"])
def test_a_busy_key_or_a_full_disk_is_one_line_without_optunas_traceback(error, tmp_path):
    done = subprocess.run([sys.executable, "-c", CHILD.format(error=error), "tune", *SMALL, "--trials", "2"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == (2 if error == "KeyBusyError" else 1), done.stderr  # a full disk is a fault: exit 1
    assert done.stderr.strip().count("\n") == 0 and "Traceback" not in done.stderr, done.stderr
