"""Tenants: one sandbox shared by parallel tests, each test in a sandbox of its own. The
check runs this module in four pytest-xdist workers against one simulator it started, as a
team's shared sandbox is used::

    LICENSING_SANDBOX_URL=… LICENSING_SANDBOX_TOKEN=… pytest -n 4 test_tenants.py

Every story test creates the same enterprise, channel customer and ``channelOrderId`` in
its own tenant at the same time as the others, and must see only its own; a reset, a clock
jump or a fault rule of one tenant must not reach another; a tenant's token is refused
under another's prefix; a deleted tenant answers 404. With ``LICENSING_EXAMPLE_TENANTS``,
each test's ``licensing_tenant`` id is written there, with the worker's name, for the
check to see that the run used several workers and that every tenant is gone after it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import licensing_order
import pytest
from licensing_order.api.assets import allocate_shell_nums
from licensing_order.api.enterprise import bind_enterprise, create_enterprise
from licensing_order.models import AllocateShellNumsRequest, CreateEnterpriseRequest
from test_story import BIND_GLOBEX, TIMEOUT, batch, customers_of, new_buy, present

from licensing import NONCE, BusinessError, check, order_client
from licensing_sandbox import Sandbox, SandboxError, Tenant

START = 1_767_225_600_000  # 2026-01-01T00:00:00Z
DAY_MS = 86_400_000


@pytest.fixture(autouse=True)
def _record_the_tenant(licensing_tenant: Tenant) -> None:
    folder = os.environ.get("LICENSING_EXAMPLE_TENANTS")
    if folder:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        (Path(folder) / f"{worker}-{licensing_tenant.id}").write_text(licensing_tenant.url)


@contextmanager
def orders(tenant: Tenant, app_token: str | None = None) -> Iterator[licensing_order.Client]:
    with order_client(tenant.url, app_token or tenant.app_token, timeout=TIMEOUT) as client:
        yield client


def globex(order: licensing_order.Client) -> str:
    """Creates Globex, binds it to CH01 as CC-GLOBEX and buys one asset on CO-1 (the same
    names in every tenant); its enterprise id."""
    body = CreateEnterpriseRequest(crm_customer_id="CRM-GLOBEX", customer_name="Globex Engineering", branch_name="South")
    enterprise = present(check(create_enterprise.sync_detailed(client=order, g_nonce=NONCE, body=body)).data).enterprise_global_id
    customer = present(check(bind_enterprise.sync_detailed(client=order, g_nonce=NONCE, body=BIND_GLOBEX)).data).customer_id
    number = present(
        check(allocate_shell_nums.sync_detailed(client=order, g_nonce=NONCE, body=AllocateShellNumsRequest(size=1))).data
    )[0]
    batch(order, "CO-1", [new_buy(1, enterprise, customer, number, "CAD")])
    return enterprise


@pytest.mark.parametrize("run", range(8))
def test_tenants_with_the_same_names_see_only_their_own(
    licensing_sandbox: Sandbox, licensing_tenant: Tenant, run: int
) -> None:
    with licensing_sandbox.tenant(name=f"other of run {run}", seed="demo", ttl=600) as other:
        with orders(licensing_tenant) as mine, orders(other) as theirs:
            assert customers_of(mine, "CC-GLOBEX") == [] and customers_of(theirs, "CC-GLOBEX") == []
            # In one sandbox the second bind of CC-GLOBEX would be refused as already bound.
            ours, its = globex(mine), globex(theirs)
            # Each sees one Globex, its own, though both used the same names and CO-1.
            assert set(customers_of(mine, "CC-GLOBEX")) == {ours}
            assert set(customers_of(theirs, "CC-GLOBEX")) == {its}

            # A reset of one leaves the other's state.
            licensing_tenant.reset()
            assert customers_of(mine, "CC-GLOBEX") == []
            assert set(customers_of(theirs, "CC-GLOBEX")) == {its}

            # A clock jump in one does not move the other's.
            licensing_tenant.set_clock(START, frozen=True)
            assert licensing_tenant.advance_clock(days=30)["now"] == START + 30 * DAY_MS
            clock = other.clock()
            assert clock["frozen"] is False and clock["now"] != START + 30 * DAY_MS, clock

            # A fault rule of one fires there only.
            licensing_tenant.add_fault("allocateShellNums", {"kind": "code", "code": "500"})
            assert other.faults() == []
            body = AllocateShellNumsRequest(size=1)
            with pytest.raises(BusinessError) as failed:
                check(allocate_shell_nums.sync_detailed(client=mine, g_nonce=NONCE, body=body))
            assert failed.value.code == "500", failed.value
            assert len(present(check(allocate_shell_nums.sync_detailed(client=theirs, g_nonce=NONCE, body=body)).data)) == 1

        # A tenant's token under another tenant's prefix is a wrong token.
        with orders(other, app_token=licensing_tenant.app_token) as crossed:
            with pytest.raises(BusinessError) as refused:
                check(allocate_shell_nums.sync_detailed(client=crossed, g_nonce=NONCE, body=body))
            assert refused.value.code == "13004", refused.value
        # Each journal holds its own tenant's traffic alone: the fault fired in one only.
        assert len(licensing_tenant.journal(operation="allocateShellNums", code="500")["entries"]) == 1
        assert other.journal(operation="allocateShellNums", code="500")["entries"] == []
        assert len(other.journal(operation="createEnterprise")["entries"]) == 1
        gone = other.id
    with pytest.raises(SandboxError) as missing:
        licensing_sandbox.get_tenant(gone)
    assert missing.value.status == 404
    reply = httpx.post(f"{other.url}/order/api/order/v1/allocateShellNums", json={"size": 1}, timeout=TIMEOUT)
    assert reply.status_code == 404


def test_a_seeded_tenant_starts_from_the_seed(licensing_sandbox: Sandbox) -> None:
    with licensing_sandbox.tenant(seed="demo") as seeded, orders(seeded) as order:
        assert len(set(customers_of(order, "CC-ACME"))) == 1
        assert seeded.seeded is not None
        assert "sim-app-" in seeded.app_token and seeded.app_token not in repr(seeded)
