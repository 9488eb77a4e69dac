"""The simulator process, and its sandbox admin API (``sim/spec/sandbox.yaml``) through the
generated client ``licensing_sandbox_admin`` (``_admin.py``)."""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import weakref
from pathlib import Path
from typing import Any, Optional, Union, cast

from licensing_sandbox_admin.api.clock import advance_clock, get_clock, set_clock
from licensing_sandbox_admin.api.faults import clear_faults, create_fault, delete_fault, list_faults
from licensing_sandbox_admin.api.journal import clear_journal, list_journal
from licensing_sandbox_admin.api.state import export_state, import_state, load_builtin_seed, load_seed, reset
from licensing_sandbox_admin.models import (
    ClockAdvance,
    ClockSetting,
    FaultRuleSpec,
    ResetRequest,
    Seed,
    StateDocument,
)
from licensing_sandbox_admin.models.builtin_seed import BuiltinSeed
from licensing_sandbox_admin.types import Response

from . import _admin as admin
from ._admin import SandboxError

DEFAULT_APP_TOKEN = "sim-app-token"
DEFAULT_CLIENT_TOKEN = "sim-client-token"
DEFAULT_USER_TOKEN = "sim-user-token"

#: Seconds ``Sandbox.start`` waits for the simulator to say where it listens and answer.
START_TIMEOUT = 30.0
#: Seconds ``stop`` waits for a clean stop before it kills the process.
STOP_TIMEOUT = 10.0
#: Seconds ``coverage`` gives ``licensing-proxy coverage``.
COVERAGE_TIMEOUT = 120.0

_LISTENING = re.compile(r"^listening on (https?://\S+)$")
_JOURNAL_FILTERS = {"operation", "code", "since", "until", "limit"}
_COVERAGE_FORMATS = {".json": "json", ".xml": "junit"}

PathLike = Union[str, "os.PathLike[str]"]


def binary(name: str) -> str:
    """The path of one of the package's programs (``licensing-sim``, ``licensing-proxy``,
    ``licensing``): ``LICENSING_SANDBOX_BIN_DIR`` when set, else the environment's scripts
    directory the wheel installed them into, else ``PATH``."""
    exe = name + (".exe" if sys.platform == "win32" else "")
    folders = [os.environ.get("LICENSING_SANDBOX_BIN_DIR"), sysconfig.get_path("scripts")]
    for folder in folders:
        if folder and os.access(os.path.join(folder, exe), os.X_OK):
            return os.path.join(folder, exe)
    found = shutil.which(exe)
    if found is None:
        raise SandboxError(f"{name} not found: install the licensing-sandbox wheel, or set LICENSING_SANDBOX_BIN_DIR")
    return found


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


class Sandbox:
    """A ``licensing-sim`` process of this interpreter's, on a free loopback port.

    ``url`` is the base address of both services and of the admin API; the tokens are the
    ones it accepts. It is ended by ``stop()``, by leaving a ``with`` block, when the object
    is collected, when the interpreter exits, and, as it runs with
    ``--exit-on-stdin-close`` on a pipe only this process holds, when this process dies in
    any other way (a signal, ``os._exit``)."""

    def __init__(self, process: subprocess.Popen[bytes], url: str, tokens: dict[str, Optional[str]], log: Any) -> None:
        self._process = process
        self._log = log
        self.url: str = url
        self.pid: int = process.pid
        self.app_token: str = tokens["app_token"] or DEFAULT_APP_TOKEN
        self.client_token: str = tokens["client_token"] or DEFAULT_CLIENT_TOKEN
        self.user_token: str = tokens["user_token"] or DEFAULT_USER_TOKEN
        #: ``None`` when the admin API was started without one.
        self.admin_token: Optional[str] = tokens["admin_token"]
        self._admin = admin.client(url, self.admin_token)
        self._finalizer = weakref.finalize(self, _end, process)
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

    def _wait_until_answering(self, deadline: float) -> None:
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
        """Whether the process is still there."""
        return self._process.poll() is None

    def stop(self) -> None:
        """Stops the simulator and waits for it to be gone (safe to call twice)."""
        self._finalizer()
        self._admin.get_httpx_client().close()
        try:
            self._log.close()
        except OSError:
            pass

    # ------------------------------------------------------------------ admin API

    def request(self, method: str, path: str, body: Any = None, query: Optional[dict[str, Any]] = None) -> Any:
        """One admin request (``path`` below ``/__sandbox/v1``), for what the methods below
        do not cover: the decoded JSON reply, or ``None`` for an empty one. A refusal raises
        ``SandboxError``."""
        params = {k: v for k, v in (query or {}).items() if v is not None}
        http = self._admin.get_httpx_client()

        def send() -> Response[Any]:
            reply = http.request(method, f"/__sandbox/v1{path}", json=body, params=params)
            return Response(status_code=reply.status_code, content=reply.content, headers=reply.headers, parsed=None)

        return admin.call(f"{method} {path}", send)

    def reset(self, enterprise_global_id: Optional[str] = None) -> Any:
        """Forgets every record (the journal and fault rules are kept; the clock goes back
        to the machine's), or one enterprise's."""
        body = ResetRequest() if enterprise_global_id is None else ResetRequest(enterprise_global_id=enterprise_global_id)
        return admin.call("reset", lambda: reset.sync_detailed(client=self._admin, body=body))

    def seed(self, seed: Union[str, dict[str, Any]] = "demo") -> Any:
        """Loads a built-in seed by name (``"demo"``) or a seed document; returns the ids
        the seed's names were given."""
        if isinstance(seed, str):
            name = cast(BuiltinSeed, seed)
            return admin.call(f"seed {seed!r}", lambda: load_builtin_seed.sync_detailed(name, client=self._admin))
        document = admin.model(Seed.from_dict, seed, "seed")
        return admin.call("seed", lambda: load_seed.sync_detailed(client=self._admin, body=document))

    def checkpoint(self) -> None:
        """Remembers the state as it is now for ``restore`` (``start`` takes one once the
        seed is loaded)."""
        self._checkpoint = self.state()

    def restore(self) -> None:
        """Back to the last checkpoint: the records as they were, no fault rules, the
        machine's clock. The journal is kept."""
        self.clear_faults()
        self.reset()
        if self._checkpoint is not None:
            self.import_state(self._checkpoint)

    def state(self) -> Any:
        """The whole state as one document (``import_state`` takes it back)."""
        return admin.call("export state", lambda: export_state.sync_detailed(client=self._admin))

    def import_state(self, document: Any) -> Any:
        """Replaces the whole state (checked completely first)."""
        body = admin.model(StateDocument.from_dict, document, "import state")
        return admin.call("import state", lambda: import_state.sync_detailed(client=self._admin, body=body))

    def journal(self, **filters: Any) -> Any:
        """The requests the services received and what they answered (``operation``,
        ``code``, ``since``, ``until``, ``limit``)."""
        unknown = sorted(set(filters) - _JOURNAL_FILTERS)
        if unknown:
            raise SandboxError(f"journal: no filter {unknown[0]!r} (filters: {', '.join(sorted(_JOURNAL_FILTERS))})")
        chosen = {k: v for k, v in filters.items() if v is not None}
        return admin.call("journal", lambda: list_journal.sync_detailed(client=self._admin, **chosen))

    def clear_journal(self) -> None:
        admin.call("clear journal", lambda: clear_journal.sync_detailed(client=self._admin))

    def faults(self) -> Any:
        """The scripted fault rules, in the order they are tried."""
        return admin.call("faults", lambda: list_faults.sync_detailed(client=self._admin))

    def add_fault(self, operation: str, fault: dict[str, Any], **match: Any) -> Any:
        """Adds a rule: ``add_fault("batchOrder", {"kind": "code", "code": "500"}, times=1)``;
        ``match`` takes ``enterpriseGlobalId``, ``bodyField``, ``times``, ``probability``,
        ``seed``. Returns the rule with its ``id``."""
        rule = admin.model(FaultRuleSpec.from_dict, {"operation": operation, "fault": fault, **match}, "add fault")
        return admin.call("add fault", lambda: create_fault.sync_detailed(client=self._admin, body=rule))

    def remove_fault(self, rule_id: int) -> None:
        admin.call(f"remove fault {rule_id}", lambda: delete_fault.sync_detailed(int(rule_id), client=self._admin))

    def clear_faults(self) -> None:
        admin.call("clear faults", lambda: clear_faults.sync_detailed(client=self._admin))

    def clock(self) -> Any:
        """The simulator's time (``now``, ms since the Unix epoch)."""
        return admin.call("clock", lambda: get_clock.sync_detailed(client=self._admin))

    def set_clock(self, now_ms: int, frozen: bool = True) -> Any:
        body = ClockSetting(now=int(now_ms), frozen=frozen)
        return admin.call("set clock", lambda: set_clock.sync_detailed(client=self._admin, body=body))

    def advance_clock(self, ms: int = 0, *, days: float = 0, seconds: float = 0) -> Any:
        """Moves the clock forward: ``advance_clock(days=31)``."""
        body = ClockAdvance(ms=int(ms + seconds * 1000 + days * 86_400_000))
        return admin.call("advance clock", lambda: advance_clock.sync_detailed(client=self._admin, body=body))

    def coverage(self, format: str = "markdown", path: Optional[PathLike] = None) -> str:
        """What the traffic in the journal exercised of the documents, by
        ``licensing-proxy coverage`` (``format``: ``markdown``, ``json`` or ``junit``);
        written to ``path`` too when given (its format then from its extension when
        ``format`` is left as it is: ``.json``, ``.xml`` for JUnit, else markdown)."""
        if path is not None and format == "markdown":
            format = _COVERAGE_FORMATS.get(Path(path).suffix.lower(), "markdown")
        with tempfile.TemporaryDirectory() as folder:
            journal = Path(folder) / "journal.json"
            journal.write_text(json.dumps(self.journal()))
            done = subprocess.run(
                [binary("licensing-proxy"), "coverage", "--format", format, str(journal)],
                capture_output=True,
                timeout=COVERAGE_TIMEOUT,
            )
        # 1 is a total under a --min threshold; none is given here, so any failure is one.
        if done.returncode != 0:
            raise SandboxError(f"licensing-proxy coverage failed: {done.stderr.decode(errors='replace')[-2000:]}")
        report = done.stdout.decode()
        if path is not None:
            Path(path).write_text(report)
        return report


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
    "binary",
    "DEFAULT_APP_TOKEN",
    "DEFAULT_CLIENT_TOKEN",
    "DEFAULT_USER_TOKEN",
]
