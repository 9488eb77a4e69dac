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

``Sandbox.connect(url, admin_token)`` is a sandbox someone else runs (a team's shared one);
``sandbox.tenant()`` is a sandbox of its own inside either, its state, clock, fault rules,
journal and tokens its alone, under its own ``url``, until ``delete()``::

    with Sandbox.connect("http://sandbox.internal:8080", token).tenant(seed="demo") as tenant:
        tenant.url, tenant.app_token
        tenant.advance_clock(days=1)  # this tenant's clock only

The pytest plugin (``licensing_sandbox.pytest_plugin``, loaded by pytest on its own) adds
the ``licensing_sandbox``, ``clean_sandbox`` and ``licensing_tenant`` fixtures,
``--licensing-url`` and ``--licensing-coverage``.
"""

from ._sandbox import (
    DEFAULT_APP_TOKEN,
    DEFAULT_CLIENT_TOKEN,
    DEFAULT_USER_TOKEN,
    Sandbox,
    SandboxError,
    Tenant,
    binary,
)
from ._version import __version__

__all__ = [
    "DEFAULT_APP_TOKEN",
    "DEFAULT_CLIENT_TOKEN",
    "DEFAULT_USER_TOKEN",
    "Sandbox",
    "SandboxError",
    "Tenant",
    "__version__",
    "binary",
]
