"""A test that waits to be interrupted or killed (run by ``check_lifecycle.py``), at
most a minute."""

import time

from licensing_sandbox import Sandbox


def test_waits_for_a_signal(clean_sandbox: Sandbox) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(0.05)
    raise AssertionError("no signal came within a minute")
