"""The simulator process and its sandbox admin API (``sim/spec/sandbox.yaml``), over the
standard library's ``urllib``."""

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
import urllib.error
import urllib.parse
import urllib.request
import weakref
from pathlib import Path
from typing import Any, Optional, Union

DEFAULT_APP_TOKEN = "sim-app-token"
DEFAULT_CLIENT_TOKEN = "sim-client-token"
DEFAULT_USER_TOKEN = "sim-user-token"

#: Seconds ``Sandbox.start`` waits for the simulator to say where it listens and answer.
START_TIMEOUT = 30.0
#: Seconds each admin request may take.
REQUEST_TIMEOUT = 30.0
#: Bytes of an admin reply read at most (the journal keeps at most 32 MiB by default; a
#: state export is bounded by what an import may send, 128 MiB).
MAX_REPLY_BYTES = 256 * 1024 * 1024
#: Seconds ``stop`` waits for a clean stop before it kills the process.
STOP_TIMEOUT = 10.0
#: Seconds ``coverage`` gives ``licensing-proxy coverage``.
COVERAGE_TIMEOUT = 120.0

_LISTENING = re.compile(r"^listening on (https?://\S+)$")
_COVERAGE_FORMATS = {".json": "json", ".xml": "junit"}

PathLike = Union[str, "os.PathLike[str]"]


class SandboxError(Exception):
    """The simulator could not be started, or its admin API refused a request (``status``:
    the HTTP status, ``field``: the path of the offending field, when it names one)."""

    def __init__(self, message: str, status: Optional[int] = None, field: Optional[str] = None) -> None:
        super().__init__(message)
        self.status = status
        self.field = field


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
            except (OSError, SandboxError):
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
        try:
            self._log.close()
        except OSError:
            pass

    # ------------------------------------------------------------------ admin API

    def request(self, method: str, path: str, body: Any = None, query: Optional[dict[str, Any]] = None) -> Any:
        """One admin request (``path`` below ``/__sandbox/v1``): the decoded JSON reply, or
        ``None`` for an empty one. A refusal raises ``SandboxError``."""
        url = f"{self.url}/__sandbox/v1{path}"
        if query:
            url += "?" + urllib.parse.urlencode({k: v for k, v in query.items() if v is not None})
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(url, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if self.admin_token is not None:
            req.add_header("Authorization", f"Bearer {self.admin_token}")
        try:
            with urllib.request.urlopen(req, timeout=REQUEST_TIMEOUT) as reply:
                text = _read(reply)
        except urllib.error.HTTPError as error:
            detail = _json_or_none(_read(error)) or {}
            message = detail.get("message") if isinstance(detail, dict) else None
            raise SandboxError(
                f"{method} {path}: HTTP {error.code}: {message or error.reason}",
                status=error.code,
                field=detail.get("field") if isinstance(detail, dict) else None,
            ) from None
        return _json_or_none(text)

    def reset(self, enterprise_global_id: Optional[str] = None) -> Any:
        """Forgets every record (the journal and fault rules are kept; the clock goes back
        to the machine's), or one enterprise's."""
        body = {} if enterprise_global_id is None else {"enterpriseGlobalId": enterprise_global_id}
        return self.request("POST", "/reset", body)

    def seed(self, seed: Union[str, dict[str, Any]] = "demo") -> Any:
        """Loads a built-in seed by name (``"demo"``) or a seed document; returns the ids
        the seed's names were given."""
        if isinstance(seed, str):
            return self.request("POST", f"/seeds/{urllib.parse.quote(seed, safe='')}")
        return self.request("POST", "/seed", seed)

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
        return self.request("GET", "/state")

    def import_state(self, document: Any) -> Any:
        """Replaces the whole state (checked completely first)."""
        return self.request("PUT", "/state", document)

    def journal(self, **filters: Any) -> Any:
        """The requests the services received and what they answered (``operation``,
        ``code``, ``since``, ``until``, ``limit``)."""
        return self.request("GET", "/journal", query=filters)

    def clear_journal(self) -> None:
        self.request("DELETE", "/journal")

    def faults(self) -> Any:
        """The scripted fault rules, in the order they are tried."""
        return self.request("GET", "/faults")

    def add_fault(self, operation: str, fault: dict[str, Any], **match: Any) -> Any:
        """Adds a rule: ``add_fault("batchOrder", {"kind": "code", "code": "500"}, times=1)``;
        ``match`` takes ``enterpriseGlobalId``, ``bodyField``, ``times``, ``probability``,
        ``seed``. Returns the rule with its ``id``."""
        return self.request("POST", "/faults", {"operation": operation, "fault": fault, **match})

    def remove_fault(self, rule_id: int) -> None:
        self.request("DELETE", f"/faults/{int(rule_id)}")

    def clear_faults(self) -> None:
        self.request("DELETE", "/faults")

    def clock(self) -> Any:
        """The simulator's time (``now``, ms since the Unix epoch)."""
        return self.request("GET", "/clock")

    def set_clock(self, now_ms: int, frozen: bool = True) -> Any:
        return self.request("PUT", "/clock", {"now": int(now_ms), "frozen": frozen})

    def advance_clock(self, ms: int = 0, *, days: float = 0, seconds: float = 0) -> Any:
        """Moves the clock forward: ``advance_clock(days=31)``."""
        total = int(ms + seconds * 1000 + days * 86_400_000)
        return self.request("POST", "/clock/advance", {"ms": total})

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


def _read(reply: Any) -> bytes:
    data: bytes = reply.read(MAX_REPLY_BYTES + 1)
    if len(data) > MAX_REPLY_BYTES:
        raise SandboxError(f"an admin reply over {MAX_REPLY_BYTES} bytes")
    return data


def _json_or_none(data: bytes) -> Any:
    if not data:
        return None
    try:
        return json.loads(data)
    except ValueError:
        return None


__all__ = [
    "Sandbox",
    "SandboxError",
    "binary",
    "DEFAULT_APP_TOKEN",
    "DEFAULT_CLIENT_TOKEN",
    "DEFAULT_USER_TOKEN",
]
