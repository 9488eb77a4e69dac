"""pytest fixtures of ``licensing_sandbox`` (entry point ``pytest11``, loaded by pytest on
its own once the package is installed).

* ``licensing_sandbox`` (session): one simulator for the whole run, started on first use
  with the seed of ``--licensing-seed`` or the ini option ``licensing_sandbox_seed``
  (``demo``, or a seed file); override the ``licensing_sandbox_options`` fixture for any
  other of ``Sandbox.start``'s options.
* ``clean_sandbox`` (function): the same simulator, handed to each test in the state it
  had right after it started (seeded), with no fault rules and the machine's clock, so
  that tests do not see each other's orders. The journal is kept, for the coverage report.
* ``--licensing-coverage FILE``: when the session's simulator stops, what the session's
  traffic covered of the documents is written to FILE (``.json``: JSON, ``.xml``: JUnit,
  else markdown), by ``licensing-proxy coverage`` over the simulator's journal (its newest
  ``journal_capacity`` entries: 1,000 unless the options say more).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ._sandbox import Sandbox


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
    parser.addini("licensing_sandbox_seed", "seed of the session's simulator: demo, or a seed file", default="")


@pytest.fixture(scope="session")
def licensing_sandbox_options(pytestconfig: pytest.Config) -> dict[str, Any]:
    """What ``licensing_sandbox`` passes to ``Sandbox.start``; override it in a
    ``conftest.py`` to set other flags (``{"seed": "demo", "trial_member_limit": 5}``)."""
    seed = pytestconfig.getoption("licensing_seed") or pytestconfig.getini("licensing_sandbox_seed") or None
    return {"seed": seed, "journal_capacity": 100_000}


@pytest.fixture(scope="session")
def licensing_sandbox(pytestconfig: pytest.Config, licensing_sandbox_options: dict[str, Any]) -> Iterator[Sandbox]:
    """The session's simulator."""
    sandbox = Sandbox.start(**licensing_sandbox_options)
    try:
        yield sandbox
        coverage = pytestconfig.getoption("licensing_coverage")
        if coverage:
            sandbox.coverage(path=coverage)
    finally:
        sandbox.stop()


@pytest.fixture
def clean_sandbox(licensing_sandbox: Sandbox) -> Sandbox:
    """The session's simulator in the state it started with, without fault rules."""
    licensing_sandbox.restore()
    return licensing_sandbox
