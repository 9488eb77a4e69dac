"""The simulator process (or one that runs elsewhere) and its tenants; the admin operations
are ``_api.py``'s, through the generated client ``licensing_sandbox_admin``
(``_admin.py``)."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import tempfile
import threading
import time
import weakref
from typing import Any, Optional, Union

from licensing_sandbox_admin.api.tenants import get_tenant, list_tenants

from . import _admin as admin
from . import _tenant
from ._admin import SandboxError
from ._api import AdminApi, PathLike
from ._binary import binary
from ._tenant import Tenant

DEFAULT_APP_TOKEN = "sim-app-token"
DEFAULT_CLIENT_TOKEN = "sim-client-token"
DEFAULT_USER_TOKEN = "sim-user-token"

#: Seconds ``Sandbox.start`` waits for the simulator to say where it listens and answer.
START_TIMEOUT = 30.0
#: Seconds ``stop`` waits for a clean stop before it kills the process.
STOP_TIMEOUT = 10.0

_LISTENING = re.compile(r"^listening on (https?://\S+)$")


def _flags(options: dict[str, Any]) -> list[str]:
    """``trial_member_limit=5`` as ``--trial-member-limit 5``; ``True`` as the bare flag,
    ``False`` and ``None`` left out, a list as the flag repeated."""
    args: list[str] = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        values = value if isinstance(value, (list, tuple)) else [value]
        for item in values:
            if item is True:
                args.append(flag)
            elif item is not None and item is not False:
                args.extend([flag, str(item)])
    return args


def _end(process: subprocess.Popen[bytes], timeout: float = STOP_TIMEOUT) -> None:
    """Ends the simulator: its stdin closed (it stops on that, its journal written), then
    SIGTERM, then SIGKILL if it is still there after ``timeout``; always reaped."""
    if process.poll() is None:
        for pipe in (process.stdin, process.stdout):
            try:
                if pipe is not None:
                    pipe.close()
            except OSError:
                pass
        try:
            process.wait(timeout=min(timeout, 2.0))
        except subprocess.TimeoutExpired:
            process.terminate()
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                process.kill()
    process.wait()


class Sandbox(AdminApi):
    """A ``licensing-sim`` process of this interpreter's, on a free loopback port
    (``start``), or one that runs elsewhere, a team's shared sandbox (``connect``).

    ``url`` is the base address of both services and of the admin API; the tokens are the
    ones it accepts. One started here is ended by ``stop()``, by leaving a ``with`` block,
    when the object is collected, when the interpreter exits, and, as it runs with
    ``--exit-on-stdin-close`` on a pipe only this process holds, when this process dies in
    any other way (a signal, ``os._exit``). One connected to is never stopped from here.
    ``tenant()`` makes a sandbox of its own inside either."""

    def __init__(
        self, process: Optional[subprocess.Popen[bytes]], url: str, tokens: dict[str, Optional[str]], log: Any
    ) -> None:
        self._process = process
        self._log = log
        self.url: str = url
        #: ``None`` for a sandbox connected to.
        self.pid: Optional[int] = None if process is None else process.pid
        self.app_token: str = tokens["app_token"] or DEFAULT_APP_TOKEN
        self.client_token: str = tokens["client_token"] or DEFAULT_CLIENT_TOKEN
        self.user_token: str = tokens["user_token"] or DEFAULT_USER_TOKEN
        #: ``None`` when the admin API was started without one.
        self.admin_token: Optional[str] = tokens["admin_token"]
        self._admin = admin.client(url, self.admin_token)
        self._finalizer = None if process is None else weakref.finalize(self, _end, process)
        self._checkpoint: Any = None

    def __repr__(self) -> str:
        # The tokens stay out of reprs, logs and tracebacks.
        return f"Sandbox(url={self.url!r}, pid={self.pid})"

    @classmethod
    def start(
        cls,
        seed: Optional[Union[str, PathLike]] = None,
        state_file: Optional[PathLike] = None,
        *,
        timeout: float = START_TIMEOUT,
        **options: Any,
    ) -> "Sandbox":
        """Starts the simulator and returns once it answers.

        ``seed``: ``"demo"`` (the built-in seed) or a seed file, loaded at start.
        ``state_file``: keep the state in this file across runs. ``options`` are the
        binary's flags (``sim/README.md``, "Command line") by their Python names:
        ``trial_member_limit=5``, ``region="singapore"``, ``latency_ms=50``,
        ``app_token="…"``. ``admin_token`` defaults to a random one (``None`` serves the
        admin API without a token, as the simulator does on loopback); ``addr`` to
        ``127.0.0.1:0``, a port the system picks."""
        options.setdefault("addr", "127.0.0.1:0")
        tokens: dict[str, Optional[str]] = {
            "app_token": options.pop("app_token", None) or DEFAULT_APP_TOKEN,
            "client_token": options.pop("client_token", None) or DEFAULT_CLIENT_TOKEN,
            "user_token": options.pop("user_token", None) or DEFAULT_USER_TOKEN,
            "admin_token": options.pop("admin_token", secrets.token_urlsafe(24)),
        }
        # Tokens go through the environment, not the command line other users can read;
        # each is set or removed, so that one inherited from this process cannot differ
        # from the one this object reports.
        env = dict(os.environ)
        for name, token in tokens.items():
            variable = "LICENSING_SIM_" + name.upper()
            if token is None:
                env.pop(variable, None)
            else:
                env[variable] = token
        seed = None if seed is None else os.fspath(seed)
        state_file = None if state_file is None else os.fspath(state_file)
        args = _flags({**options, "seed": seed, "state_file": state_file})
        log = tempfile.TemporaryFile()
        process = subprocess.Popen(
            [binary("licensing-sim"), *args, "--exit-on-stdin-close"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            env=env,
            # Not in the terminal's process group: Ctrl-C reaches this interpreter, whose
            # clean-up (the coverage report, then stop) still finds the simulator running.
            **({"start_new_session": True} if os.name == "posix" else {}),
        )
        try:
            url = _listening(process, timeout)
            sandbox = cls(process, url, tokens, log)
            sandbox._wait_until_answering(time.monotonic() + timeout)
            sandbox.checkpoint()
            return sandbox
        except BaseException as error:
            _end(process)
            if isinstance(error, SandboxError):
                raise SandboxError(f"{error}{_tail(log)}") from None
            raise

    @classmethod
    def connect(
        cls,
        url: str,
        admin_token: Optional[str] = None,
        *,
        app_token: Optional[str] = None,
        client_token: Optional[str] = None,
        user_token: Optional[str] = None,
    ) -> "Sandbox":
        """The sandbox someone else runs at ``url`` (a team's shared one), once its admin
        API answers: ``admin_token`` is its admin token (``--admin-token``), the others
        the tokens of its default tenant when they are not the simulator's defaults. No
        checkpoint is taken and ``stop()`` only closes the connection; a test gets a
        sandbox of its own from it with ``tenant()``."""
        tokens = {"app_token": app_token, "client_token": client_token, "user_token": user_token, "admin_token": admin_token}
        sandbox = cls(None, url.rstrip("/"), tokens, None)
        try:
            sandbox.clock()
        except SandboxError as error:
            sandbox.stop()
            raise SandboxError(f"no sandbox answers at {url}: {error}") from None
        return sandbox

    def tenant(
        self,
        name: Optional[str] = None,
        seed: Optional[str] = None,
        region: Optional[str] = None,
        ttl: Optional[int] = None,
    ) -> Tenant:
        """A new tenant of this sandbox: ``name`` for people (at most 100 characters),
        ``seed`` a built-in seed's name (``"demo"``), ``region`` ``"domestic"`` or
        ``"singapore"``, ``ttl`` the seconds without a request after which the simulator
        removes it (default: its ``--tenant-ttl-secs``). Use it as a context manager, or
        call ``delete()``."""
        return _tenant.create(self._admin, admin.MAX_REPLY_BYTES, name=name, seed=seed, region=region, ttl=ttl)

    def tenants(self) -> Any:
        """The live tenants (``tenants``, oldest first, without their tokens; ``max``)."""
        return admin.call("tenants", lambda: list_tenants.sync_detailed(client=self._admin))

    def get_tenant(self, tenant_id: str) -> Any:
        """One tenant with its tokens; a ``SandboxError`` with ``status`` 404 when there is
        no such tenant (deleted, or past its time to live)."""
        return admin.call(f"tenant {tenant_id}", lambda: get_tenant.sync_detailed(str(tenant_id), client=self._admin))

    def _wait_until_answering(self, deadline: float) -> None:
        assert self._process is not None
        while True:
            try:
                self.clock()
                return
            except SandboxError:
                if time.monotonic() > deadline or self._process.poll() is not None:
                    raise SandboxError(f"licensing-sim at {self.url} does not answer")
                time.sleep(0.05)

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def running(self) -> bool:
        """Whether the process is still there (one connected to: whether it answers)."""
        if self._process is None:
            try:
                self.clock()
                return True
            except SandboxError:
                return False
        return self._process.poll() is None

    def stop(self) -> None:
        """Stops the simulator and waits for it to be gone (safe to call twice); one
        connected to is left running, only the connection closed."""
        if self._finalizer is not None:
            self._finalizer()
        self._admin.get_httpx_client().close()
        try:
            if self._log is not None:
                self._log.close()
        except OSError:
            pass


def _listening(process: subprocess.Popen[bytes], timeout: float) -> str:
    """The URL of the one line the simulator prints once it accepts connections."""
    found: list[bytes] = []
    reader = threading.Thread(target=lambda: found.append(process.stdout.readline(4096)), daemon=True)
    reader.start()
    reader.join(timeout)
    if not found:
        raise SandboxError(f"licensing-sim said nothing within {timeout:.0f} s")
    line = found[0].decode(errors="replace").strip()
    match = _LISTENING.match(line)
    if match is None:
        status = process.wait(timeout=STOP_TIMEOUT) if not line else None
        raise SandboxError(f"licensing-sim did not start (exit status {status})" if not line else f"unexpected {line!r}")
    return match.group(1)


def _tail(log: Any) -> str:
    """The end of what the simulator wrote on stderr (why it did not start)."""
    try:
        log.seek(0, os.SEEK_END)
        size = log.tell()
        log.seek(max(0, size - 4096))
        text = log.read().decode(errors="replace").strip()
    except (OSError, ValueError):
        return ""
    return f": {text}" if text else ""


__all__ = [
    "Sandbox",
    "SandboxError",
    "Tenant",
    "binary",
    "DEFAULT_APP_TOKEN",
    "DEFAULT_CLIENT_TOKEN",
    "DEFAULT_USER_TOKEN",
]
