"""The Dask backend: reach a scheduler within a time limit, then play chunks on its cluster.

distributed's `Client` trusts the address it is given: a server that accepts the connection
and never answers holds its handshake for ever, a server that does not speak Dask's protocol
can make it allocate whatever frame length its bytes spell (petabytes), and an address it
cannot use here (``tls://`` without certificates, ``inproc://`` of another process) ends in a
traceback. So `connect` checks the address first (`check_address`), then asks the server who
it is over one connection of its own, bounded in time as a whole (`SCHEDULER_TIMEOUT`), and
makes a Client only once a Dask scheduler has answered. While chunks play (`DaskCluster.stream`), a
scheduler that goes away ends the run with `SchedulerLostError`: the chunks already stored
stay, and the same command resumes. distributed is imported only inside these functions: a
run on this machine does not pay for it.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import queue
import re
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from sim.errors import UserError

SCHEDULER_TIMEOUT = 5.0
"""Seconds to reach a scheduler and hear it answer, and to wait for a first worker to join."""
SCHEMES = ("tcp", "tls", "inproc")
ALLOWED = ("tcp://HOST:PORT (as `dask scheduler` prints it), tls://HOST:PORT with Dask's TLS settings "
           "(distributed.comm.tls.ca-file, .client.cert, .client.key), or the inproc:// address of a "
           "scheduler started inside this same Python process")
"""The addresses `check_address` accepts, as its errors name them."""
QUIET_LOGGERS = ("distributed.client", "distributed.gc")
"""distributed's loggers that its configuration gives a level of their own (the rest follow ``distributed``)."""
POLL_SECONDS = 1.0
"""How often a run waiting for chunks looks whether its Client has closed."""
PROBE_GRACE = 1.0
"""Seconds past the limit that the main thread waits for the probe's own timer to end it."""
_HOST_PORT = re.compile(r"(?P<host>\[[0-9A-Fa-f:.]+\]|[^\s:/\[\]@]+):(?P<port>[0-9]{1,5})")
_SHOWN = 120
"""At most this many characters of an address are echoed in an error."""

T = TypeVar("T")
R = TypeVar("R")


class SchedulerError(UserError):
    """The Dask scheduler address is unusable, the scheduler cannot be reached, or it has no workers."""


class SchedulerLostError(SchedulerError):
    """The scheduler went away (or cancelled the run's chunks) part way; the finished chunks are stored."""


def shown(address: str) -> str:
    """``address`` as an error may print it: one line, printable, at most `_SHOWN` characters."""
    text = address if address.isprintable() else ascii(address)[1:-1]
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "..."


def check_address(address: Any) -> str:
    """``address`` with its scheme (``HOST:PORT`` means ``tcp://HOST:PORT``), when it is one that `connect` can use:
    tcp, tls when Dask's configuration names this client's certificates, or inproc; else a one-line `SchedulerError`."""
    if not address or not isinstance(address, str):
        raise SchedulerError(f"--backend dask needs --scheduler: {ALLOWED}")
    scheme, sep, location = address.partition("://")
    if not sep:
        scheme, location = "tcp", address
    scheme = scheme.lower()
    if scheme not in SCHEMES:
        raise SchedulerError(f"the Dask scheduler address {shown(address)} has an unusable scheme; "
                             f"bakers-dozen reaches a scheduler at {ALLOWED}")
    if scheme == "inproc":
        if not location:
            raise SchedulerError(f"the Dask scheduler address {shown(address)} names no scheduler; use {ALLOWED}")
        return f"{scheme}://{location}"
    match = _HOST_PORT.fullmatch(location)
    if match is None or not 1 <= int(match["port"]) <= 65535:
        raise SchedulerError(f"the Dask scheduler address {shown(address)} is not {scheme}://HOST:PORT "
                             f"(a port 1-65535); bakers-dozen reaches a scheduler at {ALLOWED}")
    if scheme == "tls":
        _tls_arguments(address)
    return f"{scheme}://{location}"


def _tls_arguments(address: str) -> dict[str, Any]:
    """The connection arguments of Dask's configured security for a client: for ``tls://``, its TLS context
    (a `SchedulerError` when the configuration has none, or its files cannot be read)."""
    from distributed import Security

    try:
        arguments: dict[str, Any] = Security().get_connection_args("client")
    except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError
        raise SchedulerError(f"Dask's TLS settings cannot be used for {shown(address)}: "
                             f"{' '.join(str(exc).split())}") from None
    if address.lower().startswith("tls://") and arguments.get("ssl_context") is None:
        raise SchedulerError(
            f"{shown(address)} is a tls:// address, but Dask's configuration gives this client no TLS certificates: "
            "set distributed.comm.tls.ca-file, distributed.comm.tls.client.cert and distributed.comm.tls.client.key "
            "(or the DASK_DISTRIBUTED__COMM__TLS__... environment variables), or use tcp://HOST:PORT")
    return arguments


def quiet_logs() -> None:
    """Keep distributed's own log records below CRITICAL off the terminal (a command line's choice): a run
    that loses its scheduler otherwise prints the Client's reconnection tracebacks before its one-line error."""
    import distributed  # noqa: F401 (its import sets these levels from Dask's configuration: set them after)

    for name in ("distributed", *QUIET_LOGGERS):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def connect(address: Any, timeout: float = SCHEDULER_TIMEOUT) -> DaskCluster:
    """A `DaskCluster` (a `distributed.Client`) of the Dask scheduler at ``address``, or a one-line
    `SchedulerError` within about ``timeout`` seconds: the address is checked, then the server must answer
    Dask's handshake and say that it is a scheduler before a Client is made (a Client waits for ever on a
    server that never answers)."""
    address = check_address(address)
    arguments = _tls_arguments(address)
    _identify(address, arguments, timeout)
    from distributed import Client, Security

    failure = None
    try:
        client = Client(address, timeout=timeout, set_as_default=False, security=Security())
    except (OSError, TimeoutError) as exc:
        failure = SchedulerError(f"cannot reach the Dask scheduler at {shown(address)} within {timeout:g} s "
                                 f"({_reason(exc)}); check that the scheduler is running")
    except Exception as exc:  # noqa: BLE001 (the server's replies, judged by distributed: a scheduler's they are not)
        failure = SchedulerError(f"the server at {shown(address)} says it is a Dask scheduler, but the Dask client "
                                 f"cannot start with it ({_reason(exc)}); check that it is `dask scheduler` of a "
                                 "compatible version")
    if failure is not None:
        # The Client that failed to start still runs its event-loop thread until it is collected; collect it here,
        # so it closes now in this thread and not during some later Client's start in another (which then waits on
        # it past distributed's 10 s limit for a new loop to start).
        gc.collect()
        raise failure
    return DaskCluster(client, address)


def _identify(address: str, arguments: dict[str, Any], timeout: float) -> None:
    """Return when the server at ``address`` answers Dask's handshake and says it is a scheduler, all within
    ``timeout`` seconds; else a `SchedulerError` saying which step failed.

    The exchange runs on an event loop of its own in a daemon thread, so that it is bounded whatever the
    server does (and works from a caller that runs an event loop itself, such as a notebook)."""
    outcome: dict[str, Any] = {"step": "connect"}
    done = threading.Event()

    def probe() -> None:
        try:
            outcome["identity"] = asyncio.run(asyncio.wait_for(_ask_identity(address, arguments, outcome), timeout))
        except BaseException as exc:  # noqa: BLE001 (any failure of a server's bytes; judged below)
            outcome["error"] = exc
        finally:
            done.set()

    threading.Thread(target=probe, name="dask-scheduler-probe", daemon=True).start()
    if not done.wait(timeout + PROBE_GRACE):  # a name lookup that does not return (no timeout applies to it)
        outcome["error"] = TimeoutError()
    where = shown(address)
    error = outcome.get("error")
    if error is not None:
        raise _judged(where, address, error, outcome["step"], timeout) from None
    identity = outcome["identity"]
    kind = identity.get("type") if isinstance(identity, dict) else None
    if kind != "Scheduler":
        what = f"is a Dask {shown(kind)}, not the scheduler" if isinstance(kind, str) else \
            "answered Dask's handshake but does not say that it is a scheduler"
        raise SchedulerError(f"the server at {where} {what}; give the address `dask scheduler` prints")


async def _ask_identity(address: str, arguments: dict[str, Any], outcome: dict[str, Any]) -> Any:
    """The server's answer to Dask's ``identity`` request; ``outcome["step"]`` says how far the exchange got."""
    from distributed.comm import connect as comm_connect

    if not address.startswith("inproc://"):  # a plain TCP connection first: unreachable is told apart from mute
        host, port = _HOST_PORT.fullmatch(address.partition("://")[2]).group("host", "port")  # type: ignore[union-attr]
        _, writer = await asyncio.open_connection(host.strip("[]"), int(port))
        writer.close()
    outcome["step"] = "handshake"
    comm = await comm_connect(address, deserialize=False, **arguments)
    try:
        outcome["step"] = "identity"
        await comm.write({"op": "identity", "reply": True})
        return await comm.read()
    finally:
        comm.abort()


def _judged(where: str, address: str, error: BaseException, step: str, timeout: float) -> SchedulerError:
    """The one-line error for ``error``, raised at ``step`` of `_ask_identity` with the server at ``address``."""
    if address.startswith("inproc://"):
        return SchedulerError(f"no Dask scheduler at {where} in this process ({_reason(error)}); inproc:// reaches "
                              "only a scheduler started inside this same Python process (a LocalCluster with "
                              "processes=False): from the command line use tcp://HOST:PORT")
    if isinstance(error, TimeoutError) and step == "connect":
        return SchedulerError(f"cannot reach the Dask scheduler at {where} within {timeout:g} s; check the address "
                              "and that the scheduler is running")
    if isinstance(error, TimeoutError):
        return SchedulerError(f"the server at {where} accepted the connection but did not answer as a Dask scheduler "
                              f"within {timeout:g} s; give the address `dask scheduler` prints")
    if step == "connect":
        return SchedulerError(f"cannot reach the Dask scheduler at {where} within {timeout:g} s ({_reason(error)}); "
                              "check the address and that the scheduler is running")
    if isinstance(error, OSError):  # closed during the handshake: not Dask, or TLS certificates it refuses
        return SchedulerError(f"the server at {where} closed the connection during Dask's handshake "
                              f"({_reason(error)}); it is not a Dask scheduler, or it refuses this client's "
                              "TLS settings; give the address `dask scheduler` prints")
    if isinstance(error, Exception):
        return SchedulerError(f"the server at {where} is not a Dask scheduler: its reply is not Dask's protocol "
                              f"({type(error).__name__}); give the address `dask scheduler` prints")
    raise error  # KeyboardInterrupt, SystemExit: not the server's doing


def _reason(exc: BaseException) -> str:
    """``exc`` in a few words on one line."""
    text = " ".join(str(exc).split())[:200]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@dataclass
class DaskCluster:
    """A scheduler that answered `connect`: its Client and its address (for messages)."""

    client: Any
    address: str

    def threads(self, timeout: float = SCHEDULER_TIMEOUT) -> int:
        """Worker threads of the cluster, waiting up to ``timeout`` s for a first worker to join."""
        where = shown(self.address)
        try:
            threads = sum(self.client.nthreads().values())
            if threads == 0:
                self.client.wait_for_workers(1, timeout=timeout)
                threads = sum(self.client.nthreads().values())
        except TimeoutError:
            raise SchedulerError(f"the Dask scheduler at {where} has no workers; start some with "
                                 f"`dask worker {where}`") from None
        except OSError as exc:  # the scheduler went away since it answered
            raise SchedulerError(f"the Dask scheduler at {where} stopped answering ({_reason(exc)})") from None
        return max(threads, 1)

    def stream(self, tasks: Iterable[T], jobs: int, play: Callable[[T], R]) -> Iterator[R]:
        """``play(task)`` for each of ``tasks`` (pulled lazily) on the cluster, at most ``jobs`` at once; yield
        the results as they finish, in any order.

        Every chunk is a task of the cluster, even with one job (joblib's dask backend plays a one-job run in
        this process). A task that raises re-raises here (a worker that died on it too often:
        `distributed.KilledWorker`); cancelled tasks (the scheduler gone, after the Client's own reconnection
        attempts, or the run cancelled from outside) raise `SchedulerLostError`. Tasks still in play when this
        generator ends early are released with their futures (the scheduler then drops them), or with the
        Client when the run closes it.
        """
        source = iter(tasks)
        finished: queue.Queue[Any] = queue.Queue()
        in_play: set[Any] = set()

        def hand_out() -> None:
            while len(in_play) < jobs:
                if self._closed():
                    raise SchedulerLostError(self._lost("the connection broke and did not come back"))
                if (task := next(source, None)) is None:
                    return
                future = self.client.submit(play, task, pure=False)
                in_play.add(future)
                future.add_done_callback(finished.put)  # finished, failed or cancelled

        hand_out()
        while in_play:
            try:
                future = finished.get(timeout=POLL_SECONDS)
            except queue.Empty:  # a Client that closed may not call back for the chunks it still had
                if self._closed():
                    raise SchedulerLostError(self._lost("the connection broke and did not come back")) from None
                continue
            in_play.discard(future)
            yield self._result(future)
            hand_out()

    def _result(self, future: Any) -> Any:
        """The result of a chunk that has ended (its own error re-raised), or `SchedulerLostError` when it was
        cancelled or the Client closes meanwhile (whatever distributed then raises: a closing Client's calls end
        in errors such as "IOLoop is closed"). Fetched in steps of `POLL_SECONDS`, so that a Client that closes
        while a result is on its way cannot hold the run."""
        from distributed import CancelledError

        while True:
            try:
                return future.result(timeout=POLL_SECONDS)
            except CancelledError:
                break
            except TimeoutError:
                if future.status == "error":  # the chunk's own
                    raise
                if self._closed():
                    break
            except Exception as exc:  # noqa: BLE001 (the chunk's own error unless the Client is gone)
                if not self._closed() and not (isinstance(exc, OSError) and self.client.status == "connecting"):
                    raise
                break
        raise SchedulerLostError(self._lost("its chunks were cancelled: the scheduler stopped, or the connection "
                                            "broke and did not come back"))

    def close(self) -> None:
        """Close the Client (the scheduler drops the tasks it still holds for it)."""
        self.client.close()

    def _closed(self) -> bool:
        """Whether the Client has closed (it does so once its attempts to reconnect to the scheduler fail)."""
        return self.client.status in ("closing", "closed")

    def _lost(self, why: str) -> str:
        """The first part of a `SchedulerLostError`'s message."""
        return f"the run lost the Dask scheduler at {shown(self.address)} part way ({why})"
