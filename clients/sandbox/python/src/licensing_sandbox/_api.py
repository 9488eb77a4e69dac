"""The sandbox admin operations (reset, seed, state, journal, faults, clock, coverage) that a
``Sandbox`` and each of its ``Tenant``\\ s have alike, through the generated client
``licensing_sandbox_admin`` (``_admin.py``): a tenant's are the same calls under its prefix,
with its own admin token."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Optional, Union, cast

import licensing_sandbox_admin
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
from ._binary import binary

#: Seconds ``coverage`` gives ``licensing-proxy coverage``.
COVERAGE_TIMEOUT = 120.0

_JOURNAL_FILTERS = {"operation", "code", "since", "until", "limit"}
_COVERAGE_FORMATS = {".json": "json", ".xml": "junit"}

PathLike = Union[str, "os.PathLike[str]"]


class AdminApi:
    """The admin operations of the sandbox at ``url`` whose generated client is
    ``_admin``."""

    url: str
    _admin: licensing_sandbox_admin.Client
    _checkpoint: Any = None

    def request(self, method: str, path: str, body: Any = None, query: Optional[dict[str, Any]] = None) -> Any:
        """One admin request (``path`` below ``/__sandbox/v1``), for what the methods below
        do not cover: the decoded JSON reply, or ``None`` for an empty one. A refusal raises
        ``SandboxError``."""
        params = {k: v for k, v in (query or {}).items() if v is not None}
        http = self._admin.get_httpx_client()

        def send() -> Response[Any]:
            # httpx joins it below the base URL's path: a tenant's prefix is kept.
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
        """Remembers the state as it is now for ``restore`` (``start`` and ``tenant`` take
        one once the seed is loaded)."""
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
        """The sandbox's time (``now``, ms since the Unix epoch)."""
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
            format = coverage_format(path)
        with tempfile.TemporaryDirectory() as folder:
            (Path(folder) / "journal.json").write_text(json.dumps(self.journal()))
            report = proxy_coverage(["journal.json"], format, folder)
        if path is not None:
            Path(path).write_text(report)
        return report


def coverage_format(path: PathLike) -> str:
    """The report format a file's extension asks for: ``.json``, ``.xml`` (JUnit), else
    markdown."""
    return _COVERAGE_FORMATS.get(Path(path).suffix.lower(), "markdown")


def proxy_coverage(files: list[str], format: str, folder: PathLike) -> str:
    """``licensing-proxy coverage`` over ``files`` (journals or recordings, named relative
    to ``folder``, where it runs: the report names entries by those names)."""
    done = subprocess.run(
        [binary("licensing-proxy"), "coverage", "--format", format, *files],
        capture_output=True,
        timeout=COVERAGE_TIMEOUT,
        cwd=folder,
    )
    # 1 is a total under a --min threshold; none is given here, so any failure is one.
    if done.returncode != 0:
        raise SandboxError(f"licensing-proxy coverage failed: {done.stderr.decode(errors='replace')[-2000:]}")
    return done.stdout.decode()
