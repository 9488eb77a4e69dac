"""The coverage report of a run in several pytest-xdist workers (run by
``check_lifecycle.py`` with ``-n 4 --licensing-coverage``): ``TENANT_TESTS`` tests each
allocate one asset number and disable the demo's lock once, each in its tenant; one
disables it twice in its own; ``DEFAULT_TESTS`` allocate one in their worker's own
simulator. With ``LICENSING_EXAMPLE_TENANTS``, each test writes its worker's name there,
for the check to see that the run used several workers."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest
from licensing_order.api.assets import allocate_shell_nums, disable_locks
from licensing_order.models import AllocateShellNumsRequest, LockRequest
from test_story import TIMEOUT, present

from licensing import NONCE, check, order_client
from licensing_sandbox import Sandbox, Tenant

TENANT_TESTS = 12
DEFAULT_TESTS = 4
#: The demo seed's lock.
LOCK = "8000000001"


def record_worker() -> None:
    folder = os.environ.get("LICENSING_EXAMPLE_TENANTS")
    if folder:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        (Path(folder) / f"{worker}-{uuid.uuid4().hex}").write_text("")


def calls(url: str, token: str, locks: int) -> None:
    with order_client(url, token, timeout=TIMEOUT) as order:
        body = AllocateShellNumsRequest(size=1)
        assert len(present(check(allocate_shell_nums.sync_detailed(client=order, g_nonce=NONCE, body=body)).data)) == 1
        for _ in range(locks):
            lock = LockRequest(asset_nums=[LOCK], operator_identity="ops@example.com")
            check(disable_locks.sync_detailed(client=order, g_nonce=NONCE, body=lock))
    record_worker()


@pytest.mark.parametrize("n", range(TENANT_TESTS))
def test_in_a_tenant(licensing_tenant: Tenant, n: int) -> None:
    calls(licensing_tenant.url, licensing_tenant.app_token, locks=1)


def test_twice_in_one_tenant(licensing_tenant: Tenant) -> None:
    calls(licensing_tenant.url, licensing_tenant.app_token, locks=2)


@pytest.mark.parametrize("n", range(DEFAULT_TESTS))
def test_in_the_workers_simulator(clean_sandbox: Sandbox, n: int) -> None:
    calls(clean_sandbox.url, clean_sandbox.app_token, locks=0)
