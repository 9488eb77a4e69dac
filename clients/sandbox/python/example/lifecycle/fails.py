"""A test that fails on purpose (run by ``check_lifecycle.py``)."""

from licensing_sandbox import Sandbox


def test_fails_on_purpose(clean_sandbox: Sandbox) -> None:
    assert clean_sandbox.faults() == ["a rule no one added"]
