#!/usr/bin/env bash
# Smoke test of an installed bakers-dozen, run from an empty folder outside the checkout with the environment that
# holds the installed wheel active (.ci/package_check sets that up): every verb's help, and each kind of work once,
# so a module, a data file or a dependency the wheel lacks fails here as it would for a user who ran `pip install`.
# Usage: smoke_wheel.sh EXPECTED_VERSION
set -euo pipefail
expected=${1:?usage: smoke_wheel.sh EXPECTED_VERSION}
[ -z "$(ls -A .)" ] || { echo "smoke_wheel.sh: run me in an empty folder, not $(pwd)" >&2; exit 1; }

run() { echo "+ $*"; "$@"; }

# The installed copy, not a source tree, is what runs.
where=$(python -c 'import bakers_dozen, sim; print(bakers_dozen.__file__); print(sim.__file__)')
echo "$where"
case "$where" in *site-packages*) ;; *) echo "smoke_wheel.sh: not the installed package: $where" >&2; exit 1 ;; esac

version=$(bakers-dozen --version)
echo "$version"
[ "$version" = "bakers-dozen, version $expected" ] || { echo "smoke_wheel.sh: expected version $expected" >&2; exit 1; }

run bakers-dozen --help >/dev/null
verbs=$(python -c 'import click; from bakers_dozen.cli import main; print(*main.list_commands(click.Context(main)))')
for verb in $verbs; do
    bakers-dozen "$verb" --help >/dev/null || { echo "smoke_wheel.sh: bakers-dozen $verb --help failed" >&2; exit 1; }
done
echo "every verb's --help: $verbs"

run bakers-dozen variants
run bakers-dozen deal --deal 24 --source pysol
run bakers-dozen play --deal 7 --strategy greedy
run bakers-dozen solve -d 1-20 --store solve-store
run bakers-dozen simulate -n 2000 -q
run bakers-dozen compare --variants bakers-dozen,dick-1883 --strategy greedy -n 500 -q --out compare-report
run bakers-dozen report bakers-dozen-store --out store-report
test -s compare-report/report.html && test -s store-report/report.html
# The shipped atlas as package data, looked up from an empty folder (issue 62):
run bakers-dozen atlas show -v bakers-dozen --deal 417 --source pysol
run python -m bakers_dozen deal --deal 1
echo "smoke test of the installed wheel passed"
