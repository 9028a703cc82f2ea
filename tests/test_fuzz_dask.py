"""Hostile schedulers: servers that are not Dask, addresses Dask cannot use here, and a scheduler lost mid-run.

Each is one line and exit 2 within the connection limit (a server that is not a scheduler, an unusable
address), or one line and exit 1 with the finished chunks kept (a scheduler lost part way). Every test server
binds 127.0.0.1 only and stops when its test ends; every wait is bounded.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner
from runner_helpers import rows

from bakers_dozen.cli import main
from sim.rules import Rules
from studies import runner
from studies.dask_backend import SCHEDULER_TIMEOUT, SchedulerError, SchedulerLostError, check_address, connect
from studies.reading import read_store
from studies.runner import run
from studies.spec import RunSpec

distributed = pytest.importorskip("distributed")

RULES = Rules()
REPO = Path(__file__).resolve().parents[1]
LIMIT = 1.0
"""The connection limit of the API tests (the command line's is `SCHEDULER_TIMEOUT`)."""
SLACK = 2.0
"""Seconds a refusal may take past its limit (a loaded test machine)."""


@contextmanager
def raw_server(reply: Callable[[socket.socket], None]) -> Iterator[str]:
    """``tcp://127.0.0.1:PORT`` of a server thread that calls ``reply`` on each connection it accepts and keeps
    the connection open until the test ends."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.05)
    stop = threading.Event()
    held: list[socket.socket] = []

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            held.append(conn)
            try:
                reply(conn)
            except OSError:
                pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"tcp://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(5)
        listener.close()
        for conn in held:
            conn.close()


@contextmanager
def dask_server(answer: object) -> Iterator[str]:
    """The address of a server that speaks Dask's protocol (handshake and all, through `distributed.comm.listen`)
    and answers every request with ``answer``: a Dask server that is not a scheduler."""
    from distributed.comm import listen

    started = threading.Event()
    box: dict[str, object] = {}

    async def handle(comm: object) -> None:
        try:
            await comm.read()  # type: ignore[attr-defined]
            await comm.write(answer)  # type: ignore[attr-defined]
        except OSError:
            pass

    async def serve() -> None:
        listener = listen("tcp://127.0.0.1:0", handle)
        await listener.start()
        stop = asyncio.Event()
        box.update(address=listener.contact_address, stop=stop, loop=asyncio.get_running_loop())
        started.set()
        await stop.wait()
        listener.stop()

    thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
    thread.start()
    assert started.wait(10)
    try:
        yield str(box["address"])
    finally:
        box["loop"].call_soon_threadsafe(box["stop"].set)  # type: ignore[attr-defined]
        thread.join(5)


def refused_within(address: str, limit: float = LIMIT) -> str:
    """The message of the `SchedulerError` that `connect` raises for ``address``, checked to come within the limit."""
    start = time.monotonic()
    with pytest.raises(SchedulerError) as caught:
        connect(address, timeout=limit)
    assert time.monotonic() - start < limit + SLACK
    message = str(caught.value)
    assert "\n" not in message and address in message
    return message


def simulate(*args: str) -> tuple[int, str]:
    """Exit code and output of ``bakers-dozen simulate`` with ``args``."""
    result = CliRunner().invoke(main, ["simulate", "-n", "10", "--quiet", *args])
    return result.exit_code, result.output


# --- servers that are not a scheduler ------------------------------------------------------


def test_a_server_that_accepts_and_never_answers_is_refused_within_the_promised_limit(tmp_path):
    with raw_server(lambda conn: None) as address:
        start = time.monotonic()
        code, output = simulate("--store", str(tmp_path / "s"), "--backend", "dask", "--scheduler", address)
        assert time.monotonic() - start < SCHEDULER_TIMEOUT + SLACK + 3  # the imports of a first run, too
    assert code == 2, output
    assert output.count("\n") == 1 and "Traceback" not in output
    assert f"{address} accepted the connection but did not answer as a Dask scheduler within 5 s" in output


@pytest.mark.parametrize("reply", [
    lambda conn: None,  # silent
    lambda conn: conn.sendall(b"\x00" * 4),  # a part of a frame header, then silence
    lambda conn: time.sleep(0.5),  # answers nothing, slowly
], ids=["silent", "part-header", "slow"])
def test_a_mute_server_is_refused_within_the_limit(reply):
    with raw_server(reply) as address:
        assert "did not answer as a Dask scheduler within 1 s" in refused_within(address)


@pytest.mark.parametrize("payload", [
    struct.pack("<Q", 2**57) + bytes(64),  # a frame length of 128 PiB
    struct.pack("<Q", 2**64 - 1) + bytes(64),
    random.Random(47).randbytes(4096),
    b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n",
    b"SSH-2.0-OpenSSH_9.6\r\n",
    struct.pack("<Q", 16) + random.Random(3).randbytes(16),  # a small frame of garbage
    struct.pack("<QQ", 1, 2**62) + bytes(16),  # one frame that claims 4 EiB
], ids=["huge-frame", "max-frame", "random", "http", "ssh", "small-garbage", "huge-second-length"])
def test_a_server_that_sends_what_is_not_dask_is_named_so(payload):
    with raw_server(lambda conn: conn.sendall(payload)) as address:
        message = refused_within(address)
    assert f"the server at {address} " in message
    assert "is not a Dask scheduler" in message or "did not answer as a Dask scheduler" in message


def test_a_server_that_closes_at_once_is_named_so():
    with raw_server(lambda conn: conn.close()) as address:
        assert "closed the connection during Dask's handshake" in refused_within(address)


def test_garbage_from_the_command_line_is_one_line_and_exit_2(tmp_path):
    with raw_server(lambda conn: conn.sendall(struct.pack("<Q", 2**57) + bytes(8))) as address:
        code, output = simulate("--store", str(tmp_path / "s"), "--backend", "dask", "--scheduler", address)
    assert code == 2, output
    assert output.count("\n") == 1 and "Traceback" not in output and "MemoryError" in output
    assert f"the server at {address} is not a Dask scheduler" in output


@pytest.mark.parametrize(("answer", "said"), [
    ({"type": "Worker", "id": "w"}, "is a Dask Worker, not the scheduler"),
    ({"type": "Nanny"}, "is a Dask Nanny, not the scheduler"),
    ([1, 2, 3], "does not say that it is a scheduler"),
    ({"op": "stream-start"}, "does not say that it is a scheduler"),
])
def test_a_dask_server_that_is_not_a_scheduler_is_named_so(answer, said):
    with dask_server(answer) as address:
        assert said in refused_within(address)


def test_a_dask_server_that_only_claims_to_be_a_scheduler_is_refused_and_its_client_is_closed():
    """The Client that could not start is closed before the refusal: its event-loop thread, left to a later garbage
    collection, stalled the next cluster's start past distributed's 10 s limit."""
    loops_before = sum(t.name == "IO loop" for t in threading.enumerate())
    with dask_server({"type": "Scheduler"}) as address:
        assert "says it is a Dask scheduler, but the Dask client cannot start with it" in refused_within(address)
    assert sum(t.name == "IO loop" for t in threading.enumerate()) == loops_before


def test_a_closed_port_is_refused_at_once():
    with socket.create_server(("127.0.0.1", 0)) as s:
        address = f"tcp://127.0.0.1:{s.getsockname()[1]}"
    assert "cannot reach the Dask scheduler" in refused_within(address)


# --- addresses that cannot be used --------------------------------------------------------


@pytest.mark.parametrize(("address", "said"), [
    ("ucx://127.0.0.1:8786", "has an unusable scheme"),
    ("ws://127.0.0.1:8786", "has an unusable scheme"),
    ("http://127.0.0.1:8786", "has an unusable scheme"),
    ("nonsense://x", "has an unusable scheme"),
    ("tcp://", "is not tcp://HOST:PORT"),
    ("tcp://127.0.0.1", "is not tcp://HOST:PORT"),
    ("tcp://127.0.0.1:0", "is not tcp://HOST:PORT"),
    ("tcp://127.0.0.1:65536", "is not tcp://HOST:PORT"),
    ("tcp://127.0.0.1:+86", "is not tcp://HOST:PORT"),
    ("tcp://[::1", "is not tcp://HOST:PORT"),
    ("tcp://a b:8786", "is not tcp://HOST:PORT"),
    ("tcp://h\x1b[31m:8786", "is not tcp://HOST:PORT"),
    ("tls://127.0.0.1", "is not tls://HOST:PORT"),
    ("inproc://", "names no scheduler"),
    ("", "needs --scheduler"),
])
def test_an_unusable_address_is_refused_before_anything_starts(tmp_path, address, said):
    start = time.monotonic()
    with pytest.raises(SchedulerError, match="tcp://HOST:PORT") as caught:
        check_address(address)
    assert time.monotonic() - start < 1
    message = str(caught.value)
    assert said in message and "\n" not in message and "\x1b" not in message
    code, output = simulate("--store", str(tmp_path / "s"), "--backend", "dask", "--scheduler", address)
    assert code == 2 and output.count("\n") == 1 and said in output, output
    assert not (tmp_path / "s").exists()  # refused before the store is made


def test_tls_without_certificates_is_refused_naming_the_settings(tmp_path):
    with raw_server(lambda conn: None) as address:
        tls = address.replace("tcp://", "tls://")
        code, output = simulate("--store", str(tmp_path / "s"), "--backend", "dask", "--scheduler", tls)
    assert code == 2 and output.count("\n") == 1, output
    assert f"{tls} is a tls:// address, but Dask's configuration gives this client no TLS certificates" in output
    assert "distributed.comm.tls.ca-file" in output and "tcp://HOST:PORT" in output


def test_tls_settings_that_cannot_be_read_are_refused(tmp_path):
    import dask.config

    (tmp_path / "bad.pem").write_text("not a certificate\n")
    for ca in (tmp_path / "missing.pem", tmp_path / "bad.pem"):
        settings = {f"distributed.comm.tls.{k}": str(ca) for k in ("ca-file", "client.cert", "client.key")}
        with dask.config.set(settings), pytest.raises(SchedulerError, match="Dask's TLS settings cannot be used"):
            check_address("tls://127.0.0.1:8786")


def _certificate(folder: Path) -> tuple[str, str]:
    """A self-signed certificate and its key (openssl), used as the cluster's CA and by every role."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", "/CN=bakers-dozen-test"], check=True, capture_output=True, timeout=60)
    return str(cert), str(key)


@pytest.mark.skipif(not any((Path(p) / "openssl").exists() for p in os.get_exec_path()), reason="needs openssl")
def test_tls_with_certificates_plays_on_the_cluster(tmp_path):
    import dask.config
    from distributed import LocalCluster, Security

    cert, key = _certificate(tmp_path)
    roles = {f"tls_{role}_{part}": path for role in ("scheduler", "worker", "client")
             for part, path in (("cert", cert), ("key", key))}
    security = Security(tls_ca_file=cert, require_encryption=True, **roles)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tls://", host="127.0.0.1",
                      security=security, dashboard_address=None, silence_logs=logging.ERROR) as cluster:
        address = cluster.scheduler_address
        assert address.startswith("tls://127.0.0.1:")
        client_tls = {"distributed.comm.tls.ca-file": cert, "distributed.comm.tls.client.cert": cert,
                      "distributed.comm.tls.client.key": key}
        with dask.config.set(client_tls):
            s = run(RunSpec(RULES, "greedy", 20, tier="python"), tmp_path / "s", backend="dask", scheduler=address,
                    chunk=10)
        assert s.played == 20 and s.backend == "dask"
        with pytest.raises(SchedulerError, match="no TLS certificates"):  # the same address, no settings
            run(RunSpec(RULES, "greedy", 20, tier="python"), tmp_path / "t", backend="dask", scheduler=address)


def test_inproc_plays_on_a_scheduler_of_this_process_and_is_refused_otherwise(tmp_path):
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None,
                      silence_logs=logging.ERROR) as cluster:
        address = cluster.scheduler_address
        assert address.startswith("inproc://")
        spec = RunSpec(RULES, "greedy", 40, tier="python")
        s = run(spec, tmp_path / "s", backend="dask", scheduler=address, chunk=10)
        assert (s.played, s.jobs) == (40, 2)
        run(spec, tmp_path / "local", jobs=1)
        assert rows(read_store(tmp_path / "s")).equals(rows(read_store(tmp_path / "local")))
        host, pid, _ = address.removeprefix("inproc://").split("/")
        for other in (f"inproc://{host}/{pid}/999999", f"inproc://{host}/1/1"):
            assert "inproc:// reaches only a scheduler started inside this same Python process" in refused_within(other)
        code, output = simulate("--store", str(tmp_path / "c"), "--backend", "dask", "--scheduler", f"inproc://{host}/1/1")
        assert code == 2 and output.count("\n") == 1 and "from the command line use tcp://HOST:PORT" in output, output


def test_one_job_plays_on_the_cluster_not_in_this_process(tmp_path):
    """A run of one job is the cluster's too (joblib's dask backend played it in the calling thread, so the
    summary and the manifest said dask of a run that never reached the cluster)."""
    from distributed import LocalCluster

    log = tmp_path / "where.txt"
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None,
                      silence_logs=logging.ERROR) as cluster:
        s = run(RunSpec(RULES, f"tests.dask_helpers:SayWhere:log={log}", 12), tmp_path / "s", backend="dask",
                scheduler=cluster.scheduler_address, jobs=1, chunk=4)
    assert (s.jobs, s.played, s.backend) == (1, 12, "dask")
    places = log.read_text().split()
    assert len(places) == 24 and str(threading.get_ident()) not in places[1::2]


# --- a scheduler lost part way ------------------------------------------------------------


def _stored_chunks(store: Path) -> int:
    return len(list(store.glob("*/*.parquet")))


def _wait_for(condition: Callable[[], bool], seconds: float, what: str) -> None:
    end = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_a_client_cut_off_part_way_keeps_the_finished_chunks_and_resumes(tmp_path, monkeypatch):
    """What a lost scheduler comes to once the Client gives up reconnecting: it closes, and every chunk in play is
    cancelled. Here the Client is closed while a worker holds deal 250 (chunks 1-100 and 101-200 stored)."""
    from distributed import LocalCluster

    marker, release, store = tmp_path / "holding", tmp_path / "release", tmp_path / "s"
    strategy = f"tests.dask_helpers:HoldAt:deal=250,marker={marker},release={release},seconds=30"
    spec = RunSpec(RULES, strategy, 400)
    clusters = []

    def keep(address: str | None) -> object:
        clusters.append(connect(address))
        return clusters[-1]

    monkeypatch.setattr(runner, "connect_scheduler", keep)

    def cut_off() -> None:
        _wait_for(lambda: marker.exists() and _stored_chunks(store) == 2, 60, "deal 250 and two stored chunks")
        clusters[0].client.close()

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp://", host="127.0.0.1",
                      dashboard_address=None, silence_logs=logging.ERROR) as cluster:
        closer = threading.Thread(target=cut_off, daemon=True)
        closer.start()
        try:
            with pytest.raises(SchedulerLostError) as caught:
                run(spec, store, backend="dask", scheduler=cluster.scheduler_address, chunk=100, jobs=1)
        finally:
            release.touch()
            closer.join(5)
        message = str(caught.value)
        assert f"the run lost the Dask scheduler at {cluster.scheduler_address} part way" in message
        assert message.endswith("200 of 400 deals are saved in " + str(store) + "; run the same command again to resume")
        kept = read_store(store)
        assert sorted(kept["deal"]) == list(range(1, 201))
        resumed = run(spec, store, backend="dask", scheduler=cluster.scheduler_address, chunk=100, jobs=1)
    assert (resumed.reused, resumed.played) == (200, 200)
    greedy = run(RunSpec(RULES, "greedy", 400, tier="python"), tmp_path / "g", jobs=1)
    cols = ["deal", "outcome", "cards_home", "moves", "win_moves"]
    assert rows(read_store(store))[cols].equals(rows(read_store(tmp_path / "g"))[cols])
    assert resumed.wins == greedy.wins


@contextmanager
def _process(args: list[str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A child process of this Python, in the repository root, killed when the block ends."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, *args], cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(30)


@pytest.mark.slow
def test_a_scheduler_killed_part_way_is_one_line_exit_1_and_the_finished_rows_are_kept(tmp_path):
    """A real scheduler process, killed with SIGKILL while its worker holds deal 250 (two chunks stored)."""
    marker, release, store = tmp_path / "holding", tmp_path / "release", tmp_path / "s"
    info = tmp_path / "scheduler.json"
    strategy = f"tests.dask_helpers:HoldAt:deal=250,marker={marker},release={release},seconds=60"
    with _process(["-m", "dask", "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                   "--scheduler-file", str(info)], tmp_path / "scheduler.log") as scheduler:
        _wait_for(info.exists, 60, "the scheduler to start")
        time.sleep(0.2)  # the file is written whole, but give its writer a moment
        address = json.loads(info.read_text())["address"]
        with _process(["-m", "dask", "worker", address, "--nworkers", "1", "--nthreads", "1", "--no-dashboard"],
                      tmp_path / "worker.log"):
            command = [sys.executable, "-m", "bakers_dozen", "simulate", "-s", strategy, "-n", "400", "--chunk", "100",
                       "--jobs", "1", "--quiet", "--store", str(store), "--backend", "dask", "--scheduler", address]
            env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
            sim = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            try:
                _wait_for(lambda: marker.exists() and _stored_chunks(store) == 2, 120, "deal 250 and two chunks")
                scheduler.send_signal(signal.SIGKILL)
                out, err = sim.communicate(timeout=60)
            finally:
                release.touch()
                if sim.poll() is None:
                    sim.kill()
                    sim.wait(30)
    lines = err.decode().strip().splitlines()
    assert sim.returncode == 1, err.decode()
    assert len(lines) == 1 and not out, err.decode()
    assert f"the run lost the Dask scheduler at {address} part way" in lines[0]
    assert lines[0].endswith(f"200 of 400 deals are saved in {store}; run the same command again to resume")
    assert sorted(read_store(store)["deal"]) == list(range(1, 201))
