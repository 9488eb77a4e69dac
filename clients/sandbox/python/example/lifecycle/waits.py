"""A test that waits to be interrupted or killed (run by ``check_lifecycle.py``), at
most a minute. It says when it is inside its body (``LICENSING_EXAMPLE_PID_FILE`` with
``.in-test`` added), so that the check signals a running test, not a fixture's set-up,
however slow the machine."""

import os
import time
from pathlib import Path

from licensing_sandbox import Sandbox


def test_waits_for_a_signal(clean_sandbox: Sandbox) -> None:
    pid_file = os.environ.get("LICENSING_EXAMPLE_PID_FILE")
    if pid_file:
        Path(pid_file + ".in-test").write_text("in the test\n")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(0.05)
    raise AssertionError("no signal came within a minute")
