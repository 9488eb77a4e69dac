"""A partner's first suite on the licensing-sandbox wheel: the services called through the
generated client of licensing-client (``licensing_order``, ``licensing_member``, and the
helper ``licensing``, which adds the ``g_nonce``, the credentials and the order service's
``Content-Type`` and reads HTTP 299 as a ``BusinessError``), the simulator from the
``clean_sandbox`` fixture. ``cargo xtask dist --check`` runs it in a fresh venv, with no
Rust toolchain on PATH, as::

    pytest --licensing-seed demo --licensing-coverage coverage.md example/

Each test starts from the demo seed (Acme Robotics: alice, bob, carol) whatever the tests
before it did.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TypeVar

import httpx
import licensing_member
import licensing_order
import pytest
from licensing_member.api.members import add_members, list_members
from licensing_member.models import AddMembersRequest, NewMember
from licensing_member.types import Unset as MemberUnset
from licensing_order.api.assets import allocate_shell_nums, disable_locks
from licensing_order.api.enterprise import bind_enterprise, create_enterprise, query_enterprise
from licensing_order.api.orders import batch_order
from licensing_order.models import (
    AllocateShellNumsRequest,
    Asset,
    BatchOrderRequest,
    BatchOrderResultItem,
    BindEnterpriseRequest,
    CreateEnterpriseRequest,
    DeleteAssetOrder,
    DeleteProductOrder,
    LockRequest,
    NewBuyOrder,
    Product,
    RevokedAsset,
)
from licensing_order.types import Unset as OrderUnset

from licensing import NONCE, BusinessError, check, member_client, order_client
from licensing_sandbox import Sandbox, SandboxError

T = TypeVar("T")
TIMEOUT = httpx.Timeout(30.0)
#: Globex bound to CH01 as the channel customer CC-GLOBEX.
BIND_GLOBEX = BindEnterpriseRequest(
    channel_code="CH01",
    channel_customer_id="CC-GLOBEX",
    customer_name="Globex Engineering (CH01)",
    branch_name="South",
    enterprise_name="Globex Engineering",
    password_mobile="13800000000",
)


@pytest.fixture
def order(clean_sandbox: Sandbox) -> Iterator[licensing_order.Client]:
    """The order service's client: the app token, a fresh ``g_nonce`` and ``Content-Type``
    on every request."""
    with order_client(clean_sandbox.url, clean_sandbox.app_token, timeout=TIMEOUT) as client:
        yield client


@pytest.fixture
def member(clean_sandbox: Sandbox) -> Iterator[licensing_member.Client]:
    """The member center's client: its three headers and a fresh ``g_nonce``."""
    with member_client(clean_sandbox.url, clean_sandbox.client_token, clean_sandbox.user_token, timeout=TIMEOUT) as client:
        yield client


def present(value: T | OrderUnset | MemberUnset) -> T:
    """A reply's ``data``, asserted to be there (each generated package has its ``Unset``)."""
    assert not isinstance(value, (OrderUnset, MemberUnset)), "no data in the reply"
    return value


def new_buy(sequence: int, enterprise: str, customer: str, number: str, product: str) -> NewBuyOrder:
    return NewBuyOrder(
        sequence=sequence,
        order_type="new_buy",
        license_type="normal_recover_usbkey",
        enterprise_global_id=enterprise,
        customer_id=customer,
        crm_customer_id="CRM-GLOBEX",
        customer_name="Globex Engineering",
        channel_customer_id="CC-GLOBEX",
        admin_name="Ada Admin",
        admin_account="ada",
        admin_email="ada@example.com",
        admin_cell_number="13800000000",
        password_mobile="13800000000",
        address="12 Harbour Road",
        customer_type="company",
        branch_code="BR01",
        branch_name="South",
        assets=[
            Asset(
                asset_nos=[number],
                products=[
                    Product(
                        crm_product_id=f"P-{number}",
                        parent_crm_product_id=f"A-{number}",
                        product_uri=product,
                        product_name=f"{product} license",
                        product_type="software",
                        limit_concurrent=5,
                        limit_time_duration=0,
                        trial=0,
                        trial_end_date=0,
                        time_unit="year",
                        time_unit_quantity=1,
                        time_duration_expression="1-0-0",
                        product_features=[],
                    )
                ],
            )
        ],
    )


def batch(
    order: licensing_order.Client, channel_order_id: str, orders: list[NewBuyOrder | DeleteAssetOrder | DeleteProductOrder]
) -> list[BatchOrderResultItem]:
    body = BatchOrderRequest(channel_code="CH01", channel_order_id=channel_order_id, sync_mode="sync", order_list=orders)
    results = present(check(batch_order.sync_detailed(client=order, g_nonce=NONCE, app_key="example", body=body)).data)
    assert sorted(r.sequence for r in results) == [o.sequence for o in orders]
    return results


def add_member(member: licensing_member.Client, enterprise: str, user: NewMember) -> list[str]:
    """Adds one employee; the names of those added."""
    body = AddMembersRequest(user_list=[user])
    added = present(check(add_members.sync_detailed(enterprise, client=member, g_nonce=NONCE, body=body)).data)
    return [m.user_name.split("@")[0] for m in added.succeeded]


def employees(member: licensing_member.Client, enterprise: str) -> list[str]:
    response = list_members.sync_detailed(enterprise, client=member, g_nonce=NONCE, page_num=1, page_size=100)
    return sorted(m.user_name.split("@")[0] for m in present(check(response).data).list_)


def customers_of(order: licensing_order.Client, channel_customer_id: str) -> list[str]:
    """The enterprises a channel customer of CH01 is bound to; none when it is unknown,
    which the order service answers with a business error of no data."""
    try:
        reply = check(
            query_enterprise.sync_detailed(
                client=order,
                g_nonce=NONCE,
                channel_code="CH01",
                channel_customer_id=channel_customer_id,
                default_customer="N",
            )
        )
    except BusinessError as error:
        assert isinstance(error.reply.data, OrderUnset) or error.reply.data == [], error
        return []
    return [] if isinstance(reply.data, OrderUnset) else [c.enterprise_global_id for c in reply.data]


def acme(order: licensing_order.Client) -> str:
    return customers_of(order, "CC-ACME")[0]


def test_a_partner_story(order: licensing_order.Client, member: licensing_member.Client) -> None:
    body = CreateEnterpriseRequest(crm_customer_id="CRM-GLOBEX", customer_name="Globex Engineering", branch_name="South")
    created = present(check(create_enterprise.sync_detailed(client=order, g_nonce=NONCE, body=body)).data)
    enterprise = created.enterprise_global_id
    bind = BIND_GLOBEX
    customer = present(check(bind_enterprise.sync_detailed(client=order, g_nonce=NONCE, body=bind)).data).customer_id

    # A business error (HTTP 299) raised by the helper as such, with its code, message and cause.
    with pytest.raises(BusinessError) as again:
        check(bind_enterprise.sync_detailed(client=order, g_nonce=NONCE, body=bind))
    assert again.value.code == "13004", again.value
    assert again.value.message and "already bound" in (again.value.cause or ""), again.value

    response = allocate_shell_nums.sync_detailed(client=order, g_nonce=NONCE, body=AllocateShellNumsRequest(size=3))
    a, b, c = present(check(response).data)
    batch(order, "CO-1", [new_buy(1, enterprise, customer, a, "CAD"), new_buy(2, enterprise, customer, b, "CAD")])
    # A mixed batch: a purchase and a revocation in one channel order.
    revoke = DeleteAssetOrder(
        sequence=2,
        order_type="delete_asset",
        license_type="normal_recover_usbkey",
        enterprise_global_id=enterprise,
        customer_id=customer,
        assets=[RevokedAsset(asset_nos=[b])],
    )
    mixed = batch(order, "CO-2", [new_buy(1, enterprise, customer, c, "VIEWER"), revoke])
    assert all(r.license_order_id.startswith("LO-") for r in mixed)

    lock = LockRequest(asset_nums=[a, b], operator_identity="ops@example.com")
    locked = present(check(disable_locks.sync_detailed(client=order, g_nonce=NONCE, body=lock)).data)
    # 1: disabled; 2: no such lock (b was revoked).
    assert {r.asset_num: r.status for r in locked} == {a: 1, b: 2}

    assert add_member(member, enterprise, NewMember(user_name="dave", name="Dave", password="Initial-Pass-4")) == ["dave"]
    assert "dave" in employees(member, enterprise)

    # One added to the demo's enterprise too: the next test must not see it.
    add_member(member, acme(order), NewMember(user_name="erin", name="Erin", password="Initial-Pass-5"))
    assert "erin" in employees(member, acme(order))


def test_each_test_starts_from_the_seed(order: licensing_order.Client, member: licensing_member.Client) -> None:
    names = employees(member, acme(order))
    assert {"alice", "bob", "carol"} <= set(names) and "erin" not in names, names
    assert customers_of(order, "CC-GLOBEX") == []


def test_the_clock_moves_when_told(clean_sandbox: Sandbox) -> None:
    start = 1_767_225_600_000  # 2026-01-01T00:00:00Z
    clean_sandbox.set_clock(start, frozen=True)
    assert clean_sandbox.advance_clock(days=30)["now"] == start + 30 * 86_400_000
    assert clean_sandbox.clock()["now"] == start + 30 * 86_400_000


def test_a_fault_fires_as_scripted(clean_sandbox: Sandbox, order: licensing_order.Client) -> None:
    rule = clean_sandbox.add_fault("allocateShellNums", {"kind": "code", "code": "500"}, times=1)
    body = AllocateShellNumsRequest(size=1)
    with pytest.raises(BusinessError) as failed:
        check(allocate_shell_nums.sync_detailed(client=order, g_nonce=NONCE, body=body))
    assert (failed.value.status, failed.value.code) == (299, "500"), failed.value
    assert len(present(check(allocate_shell_nums.sync_detailed(client=order, g_nonce=NONCE, body=body)).data)) == 1
    assert [(r["id"], r["hits"]) for r in clean_sandbox.faults()] == [(rule["id"], 1)]


def test_the_next_test_has_no_fault_rules(clean_sandbox: Sandbox) -> None:
    assert clean_sandbox.faults() == []
    assert clean_sandbox.clock()["frozen"] is False


def test_the_journal_feeds_the_coverage_report(clean_sandbox: Sandbox) -> None:
    report = json.loads(clean_sandbox.coverage(format="json"))
    text = json.dumps(report)
    for operation in ("createEnterprise", "batchOrder", "disableLocks", "addMembers"):
        assert operation in text


def test_a_simulator_that_cannot_start_says_why() -> None:
    with pytest.raises(SandboxError, match="--trial-member-limit"):
        Sandbox.start(trial_member_limit="many")
