"""pytest fixtures of ``licensing_sandbox`` (entry point ``pytest11``, loaded by pytest on
its own once the package is installed).

* ``licensing_sandbox`` (session): one simulator for the whole run, started on first use
  with the seed of ``--licensing-seed`` or the ini option ``licensing_sandbox_seed``
  (``demo``, or a seed file); override the ``licensing_sandbox_options`` fixture for any
  other of ``Sandbox.start``'s options. With ``--licensing-url URL`` (or
  ``LICENSING_SANDBOX_URL``) it is the sandbox already running there, a team's shared one,
  administered with ``--licensing-admin-token`` (or, kept off the command line,
  ``LICENSING_SANDBOX_TOKEN``); nothing is started.
* ``clean_sandbox`` (function): the same simulator, handed to each test in the state it
  had right after it started (seeded), with no fault rules and the machine's clock, so
  that tests do not see each other's orders. The journal is kept, for the coverage report.
  Refused with a shared sandbox, whose state is not this run's to reset.
* ``licensing_tenant`` (function): a new tenant of that sandbox for each test, seeded with
  the session's seed, deleted after the test: its own state, clock, fault rules, journal
  and tokens, so that tests in parallel (pytest-xdist workers, or runs of several people
  against one shared sandbox) never see each other's. Override
  ``licensing_tenant_options`` for its ``region`` or ``ttl``.
* ``--licensing-coverage FILE``: once the run is over, what its traffic covered of the
  documents is written to FILE (``.json``: JSON, ``.xml``: JUnit, else markdown), by
  ``licensing-proxy coverage`` over every journal of the run: the session's simulator's
  (its newest ``journal_capacity`` entries; not a shared sandbox's, whose default tenant
  is everyone's) and each ``licensing_tenant``'s, read before the tenant is deleted, each
  a file of its own named after its test (so a double submission is one within a test's
  tenant, and the report names the test). Under pytest-xdist every worker writes its
  journals to one folder of the run and the report is written once, by the controller,
  after the last worker ends.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Optional

import pytest
from licensing_sandbox_admin.models.builtin_seed import BUILTIN_SEED_VALUES

from ._admin import SandboxError
from ._coverage import Journals
from ._sandbox import Sandbox
from ._tenant import NAME_LIMIT, Tenant

#: The environment's say when the command line has none.
URL_VARIABLE = "LICENSING_SANDBOX_URL"
ADMIN_TOKEN_VARIABLE = "LICENSING_SANDBOX_TOKEN"
#: Seconds a fixture's tenant outlives a run killed before it could delete it.
TENANT_TTL = 900

#: The run's journals, when ``--licensing-coverage`` asks for a report.
_JOURNALS = pytest.StashKey[Journals]()
#: What tells a pytest-xdist worker where the run's journals go.
_FOLDER_INPUT = "licensing_coverage_folder"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("licensing-sandbox")
    group.addoption(
        "--licensing-coverage",
        metavar="FILE",
        default=None,
        help="write what the run's traffic (its simulators' and every licensing_tenant's) covered of the documents "
        "to FILE (.json, .xml: JUnit, else markdown), once for all pytest-xdist workers",
    )
    group.addoption(
        "--licensing-seed",
        metavar="SEED",
        default=None,
        help="seed the session's simulator with SEED: demo, or a seed file (default: the ini option)",
    )
    group.addoption(
        "--licensing-url",
        metavar="URL",
        default=None,
        help=f"use the sandbox running at URL (a shared one) instead of starting one (default: ${URL_VARIABLE})",
    )
    group.addoption(
        "--licensing-admin-token",
        metavar="TOKEN",
        default=None,
        help=f"the admin token of the sandbox at --licensing-url (default: ${ADMIN_TOKEN_VARIABLE})",
    )
    parser.addini("licensing_sandbox_seed", "seed of the session's simulator: demo, or a seed file", default="")


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption("licensing_coverage"):
        return
    if _is_worker(config):
        folder = config.workerinput[_FOLDER_INPUT]  # type: ignore[attr-defined]
    else:
        folder = tempfile.mkdtemp(prefix="licensing-coverage-")
    config.stash[_JOURNALS] = Journals(folder)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist: each worker writes its journals where the controller reads them."""
    journals = node.config.stash.get(_JOURNALS, None)
    if journals is not None:
        node.workerinput[_FOLDER_INPUT] = str(journals.folder)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """The report, once every journal of the run is written: after the session's fixtures
    are torn down (pytest's own ``sessionfinish``) and, under pytest-xdist, in the
    controller once every worker has ended."""
    config = session.config
    journals = config.stash.get(_JOURNALS, None)
    if journals is None or _is_worker(config):
        return
    path = config.getoption("licensing_coverage")
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    try:
        read = journals.report(path)
        said = f"no journal to report on: {path} not written" if read is None else f"{path} ({read} journals)"
    except SandboxError as error:
        said = f"the report could not be written: {error}"
        if session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
    finally:
        journals.remove()
    if reporter is not None:
        reporter.write_line(f"licensing coverage: {said}")


def _save_journal(config: pytest.Config, label: str, sandbox: Any) -> None:
    journals = config.stash.get(_JOURNALS, None)
    if journals is not None:
        journals.add(label, sandbox.journal())


def _shared_url(config: pytest.Config) -> Optional[str]:
    return config.getoption("licensing_url") or os.environ.get(URL_VARIABLE) or None


def _seed(config: pytest.Config) -> Optional[str]:
    return config.getoption("licensing_seed") or config.getini("licensing_sandbox_seed") or None


@pytest.fixture(scope="session")
def licensing_sandbox_options(pytestconfig: pytest.Config) -> dict[str, Any]:
    """What ``licensing_sandbox`` passes to ``Sandbox.start``; override it in a
    ``conftest.py`` to set other flags (``{"seed": "demo", "trial_member_limit": 5}``)."""
    return {"seed": _seed(pytestconfig), "journal_capacity": 100_000}


@pytest.fixture(scope="session")
def licensing_sandbox(pytestconfig: pytest.Config, licensing_sandbox_options: dict[str, Any]) -> Iterator[Sandbox]:
    """The session's simulator, or the shared one of ``--licensing-url``."""
    url = _shared_url(pytestconfig)
    if url is not None:
        token = pytestconfig.getoption("licensing_admin_token") or os.environ.get(ADMIN_TOKEN_VARIABLE) or None
        sandbox = Sandbox.connect(url, token)
    else:
        sandbox = Sandbox.start(**licensing_sandbox_options)
    try:
        yield sandbox
        if url is None:
            _save_journal(pytestconfig, f"sandbox-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}", sandbox)
    finally:
        sandbox.stop()


@pytest.fixture
def clean_sandbox(pytestconfig: pytest.Config, licensing_sandbox: Sandbox) -> Sandbox:
    """The session's simulator in the state it started with, without fault rules."""
    if _shared_url(pytestconfig) is not None:
        pytest.fail(
            "clean_sandbox resets the sandbox of --licensing-url, which others share: use licensing_tenant", pytrace=False
        )
    licensing_sandbox.restore()
    return licensing_sandbox


@pytest.fixture
def licensing_tenant_options(pytestconfig: pytest.Config, request: pytest.FixtureRequest) -> dict[str, Any]:
    """What ``licensing_tenant`` passes to ``Sandbox.tenant``: the test's id as its name,
    the session's seed when it is a built-in one (a seed file is loaded into the tenant
    after), and a time to live of 15 minutes without a request."""
    seed = _seed(pytestconfig)
    name = "".join(c for c in request.node.nodeid if c.isprintable())[-NAME_LIMIT:]
    return {"name": name, "seed": seed if seed in BUILTIN_SEED_VALUES else None, "ttl": TENANT_TTL}


@pytest.fixture
def licensing_tenant(
    pytestconfig: pytest.Config,
    request: pytest.FixtureRequest,
    licensing_sandbox: Sandbox,
    licensing_tenant_options: dict[str, Any],
) -> Iterator[Tenant]:
    """A tenant of the session's sandbox for this test alone, deleted after it."""
    with licensing_sandbox.tenant(**licensing_tenant_options) as tenant:
        seed = _seed(pytestconfig)
        if seed is not None and seed not in BUILTIN_SEED_VALUES and licensing_tenant_options.get("seed") is None:
            tenant.seed(json.loads(Path(seed).read_text()))
            tenant.checkpoint()
        yield tenant
        # Its journal goes with it: read now, for the run's report.
        _save_journal(pytestconfig, request.node.nodeid, tenant)
