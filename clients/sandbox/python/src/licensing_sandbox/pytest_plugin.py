"""pytest fixtures of ``licensing_sandbox`` (entry point ``pytest11``, loaded by pytest on
its own once the package is installed).

* ``licensing_sandbox`` (session): one simulator for the whole run, started on first use
  with the seed of ``--licensing-seed`` or the ini option ``licensing_sandbox_seed``
  (``demo``, or a seed file); override the ``licensing_sandbox_options`` fixture for any
  other of ``Sandbox.start``'s options. With ``--licensing-url URL`` (or
  ``LICENSING_SANDBOX_URL``) it is the sandbox already running there, a team's shared one,
  administered with ``--licensing-admin-token`` (or, kept off the command line,
  ``LICENSING_SANDBOX_ADMIN_TOKEN``); nothing is started.
* ``clean_sandbox`` (function): the same simulator, handed to each test in the state it
  had right after it started (seeded), with no fault rules and the machine's clock, so
  that tests do not see each other's orders. The journal is kept, for the coverage report.
  Refused with a shared sandbox, whose state is not this run's to reset.
* ``licensing_tenant`` (function): a new tenant of that sandbox for each test, seeded with
  the session's seed, deleted after the test: its own state, clock, fault rules, journal
  and tokens, so that tests in parallel (pytest-xdist workers, or runs of several people
  against one shared sandbox) never see each other's. Override
  ``licensing_tenant_options`` for its ``region`` or ``ttl``.
* ``--licensing-coverage FILE``: when the session's simulator stops, what the session's
  traffic covered of the documents is written to FILE (``.json``: JSON, ``.xml``: JUnit,
  else markdown), by ``licensing-proxy coverage`` over the simulator's journal (its newest
  ``journal_capacity`` entries: 1,000 unless the options say more); the default tenant's
  journal, not the tenants'.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Optional

import pytest
from licensing_sandbox_admin.models.builtin_seed import BUILTIN_SEED_VALUES

from ._sandbox import Sandbox
from ._tenant import NAME_LIMIT, Tenant

#: The environment's say when the command line has none.
URL_VARIABLE = "LICENSING_SANDBOX_URL"
ADMIN_TOKEN_VARIABLE = "LICENSING_SANDBOX_ADMIN_TOKEN"
#: Seconds a fixture's tenant outlives a run killed before it could delete it.
TENANT_TTL = 900


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("licensing-sandbox")
    group.addoption(
        "--licensing-coverage",
        metavar="FILE",
        default=None,
        help="write what the session's traffic covered of the documents to FILE (.json, .xml: JUnit, else markdown)",
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
        coverage = pytestconfig.getoption("licensing_coverage")
        if coverage:
            sandbox.coverage(path=coverage)
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
    pytestconfig: pytest.Config, licensing_sandbox: Sandbox, licensing_tenant_options: dict[str, Any]
) -> Iterator[Tenant]:
    """A tenant of the session's sandbox for this test alone, deleted after it."""
    with licensing_sandbox.tenant(**licensing_tenant_options) as tenant:
        seed = _seed(pytestconfig)
        if seed is not None and seed not in BUILTIN_SEED_VALUES and licensing_tenant_options.get("seed") is None:
            tenant.seed(json.loads(Path(seed).read_text()))
            tenant.checkpoint()
        yield tenant
