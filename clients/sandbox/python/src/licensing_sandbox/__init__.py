"""The licensing platform's simulator for tests in Python.

``Sandbox.start(seed="demo")`` starts ``licensing-sim`` (installed with this package) on a
free loopback port and returns once it answers; the object carries the base ``url``, the
tokens the services accept and the sandbox's admin operations (reset, seed, state, journal,
faults, clock, coverage)::

    from licensing_sandbox import Sandbox

    with Sandbox.start(seed="demo") as sandbox:
        print(sandbox.url)            # http://127.0.0.1:40123
        sandbox.advance_clock(days=1)
        sandbox.add_fault("batchOrder", {"kind": "code", "code": "500"}, times=1)

The pytest plugin (``licensing_sandbox.pytest_plugin``, loaded by pytest on its own) adds
the ``licensing_sandbox`` and ``clean_sandbox`` fixtures and ``--licensing-coverage``.
"""

from ._sandbox import (
    DEFAULT_APP_TOKEN,
    DEFAULT_CLIENT_TOKEN,
    DEFAULT_USER_TOKEN,
    Sandbox,
    SandboxError,
    binary,
)
from ._version import __version__

__all__ = [
    "DEFAULT_APP_TOKEN",
    "DEFAULT_CLIENT_TOKEN",
    "DEFAULT_USER_TOKEN",
    "Sandbox",
    "SandboxError",
    "__version__",
    "binary",
]
