"""For ``check_lifecycle.py`` only: the PID of the session's simulator, written where
``LICENSING_EXAMPLE_PID_FILE`` says, so that the check can see it is gone afterwards."""

from __future__ import annotations

import os

import pytest

from licensing_sandbox import Sandbox


@pytest.fixture(autouse=True, scope="session")
def _record_the_simulator_pid(licensing_sandbox: Sandbox) -> None:
    path = os.environ.get("LICENSING_EXAMPLE_PID_FILE")
    if path:
        with open(path, "w") as out:
            out.write(str(licensing_sandbox.pid))
