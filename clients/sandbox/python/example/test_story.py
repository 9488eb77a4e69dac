"""A partner's first suite on the licensing-sandbox wheel: the services called over plain
HTTP (the standard library's urllib), the simulator from the ``clean_sandbox`` fixture.
``cargo xtask dist --check`` runs it in a fresh venv, with no Rust toolchain on PATH, as::

    pytest --licensing-seed demo --licensing-coverage coverage.md example/

Each test starts from the demo seed (Acme Robotics: alice, bob, carol) whatever the tests
before it did.
"""

from __future__ import annotations

import base64
import json
import secrets
import urllib.parse
import urllib.request
from typing import Any

import pytest

from licensing_sandbox import Sandbox, SandboxError

ORDER = "/order/api/order/v1"
MEMBER = "/me/api/v1"


def call(sandbox: Sandbox, method: str, path: str, body: Any = None, **query: Any) -> tuple[int, dict[str, Any]]:
    """One request to either service, with what every request needs: a fresh ``g_nonce``,
    the service's credentials, the order service's ``Content-Type`` on every request.
    Returns the HTTP status (200, or 299 for a business error) and the envelope."""
    query["g_nonce"] = base64.urlsafe_b64encode(secrets.token_bytes(24)).rstrip(b"=").decode()
    request = urllib.request.Request(
        f"{sandbox.url}{path}?{urllib.parse.urlencode(query)}",
        data=None if body is None else json.dumps(body).encode(),
        method=method,
    )
    if path.startswith(ORDER):
        request.add_header("Authorization", f"Bearer {sandbox.app_token}")
        request.add_header("Content-Type", "application/json")
    else:
        request.add_header("Authorization", f"Bearer {sandbox.client_token}")
        request.add_header("clientToken", sandbox.client_token)
        request.add_header("userToken", sandbox.user_token)
        if body is not None:
            request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=30) as reply:
        return reply.status, json.loads(reply.read(16 * 1024 * 1024))


def ok(reply: tuple[int, dict[str, Any]]) -> Any:
    """The ``data`` of a success; anything else fails the test with the envelope."""
    status, envelope = reply
    assert (status, envelope["code"]) == (200, 0), envelope
    return envelope.get("data")


def new_buy(sequence: int, enterprise: str, customer: str, number: str, product: str) -> dict[str, Any]:
    return {
        "sequence": sequence,
        "orderType": "new_buy",
        "licenseType": "normal_recover_usbkey",
        "enterpriseGlobalId": enterprise,
        "customerId": customer,
        "crmCustomerId": "CRM-GLOBEX",
        "customerName": "Globex Engineering",
        "channelCustomerId": "CC-GLOBEX",
        "adminName": "Ada Admin",
        "adminAccount": "ada",
        "adminEmail": "ada@example.com",
        "adminCellNumber": "13800000000",
        "passwordMobile": "13800000000",
        "address": "12 Harbour Road",
        "customerType": "company",
        "branchCode": "BR01",
        "branchName": "South",
        "assets": [
            {
                "assetNos": [number],
                "products": [
                    {
                        "crmProductId": f"P-{number}",
                        "parentCrmProductId": f"A-{number}",
                        "productUri": product,
                        "productName": f"{product} license",
                        "productType": "software",
                        "limitConcurrent": 5,
                        "limitTimeDuration": 0,
                        "trial": 0,
                        "trialEndDate": 0,
                        "timeUnit": "year",
                        "timeUnitQuantity": 1,
                        "timeDurationExpression": "1-0-0",
                        "productFeatures": [],
                    }
                ],
            }
        ],
    }


def batch(sandbox: Sandbox, channel_order_id: str, orders: list[dict[str, Any]]) -> list[dict[str, Any]]:
    body = {"channelCode": "CH01", "channelOrderId": channel_order_id, "syncMode": "sync", "orderList": orders}
    results: list[dict[str, Any]] = ok(call(sandbox, "POST", f"{ORDER}/licenseOrder/batchOrder", body, appKey="example"))
    assert sorted(r["sequence"] for r in results) == [o["sequence"] for o in orders]
    return results


def employees(sandbox: Sandbox, enterprise: str) -> list[str]:
    page = ok(call(sandbox, "GET", f"{MEMBER}/enterprise/{enterprise}/members", pageNum=1, pageSize=100))
    return sorted(m["userName"].split("@")[0] for m in page["list"])


def acme(sandbox: Sandbox) -> str:
    customers = ok(
        call(sandbox, "GET", f"{ORDER}/enterprise/user/query", channelCode="CH01", channelCustomerId="CC-ACME", defaultCustomer="N")
    )
    return str(customers[0]["enterpriseGlobalId"])


def test_a_partner_story(clean_sandbox: Sandbox) -> None:
    sandbox = clean_sandbox
    created = ok(
        call(
            sandbox,
            "POST",
            f"{ORDER}/enterprise/user/create",
            {"crmCustomerId": "CRM-GLOBEX", "customerName": "Globex Engineering", "branchName": "South"},
        )
    )
    enterprise = created["enterpriseGlobalId"]
    bind = {
        "channelCode": "CH01",
        "channelCustomerId": "CC-GLOBEX",
        "customerName": "Globex Engineering (CH01)",
        "branchName": "South",
        "enterpriseName": "Globex Engineering",
        "passwordMobile": "13800000000",
    }
    customer = ok(call(sandbox, "POST", f"{ORDER}/enterprise/user/bind", bind))["customerId"]

    # A business error is HTTP 299 with the envelope's code, not an HTTP error.
    status, again = call(sandbox, "POST", f"{ORDER}/enterprise/user/bind", bind)
    assert (status, again["code"]) == (299, "13004"), again

    a, b, c = ok(call(sandbox, "POST", f"{ORDER}/shellnums", {"size": 3}))
    batch(sandbox, "CO-1", [new_buy(1, enterprise, customer, a, "CAD"), new_buy(2, enterprise, customer, b, "CAD")])
    # A mixed batch: a purchase and a revocation in one channel order.
    revoke = {
        "sequence": 2,
        "orderType": "delete_asset",
        "licenseType": "normal_recover_usbkey",
        "enterpriseGlobalId": enterprise,
        "customerId": customer,
        "assets": [{"assetNos": [b]}],
    }
    mixed = batch(sandbox, "CO-2", [new_buy(1, enterprise, customer, c, "VIEWER"), revoke])
    assert all(r["licenseOrderId"].startswith("LO-") for r in mixed)

    locked = ok(call(sandbox, "POST", f"{ORDER}/asset/lock", {"assetNums": [a, b], "operatorIdentity": "ops@example.com"}))
    # 1: disabled; 2: no such lock (b was revoked).
    assert {r["assetNum"]: r["status"] for r in locked} == {a: 1, b: 2}

    added = ok(
        call(sandbox, "POST", f"{MEMBER}/enterprise/{enterprise}/member", {"userList": [{"userName": "dave", "name": "Dave", "password": "Initial-Pass-4"}]})
    )
    assert [m["userName"].split("@")[0] for m in added["succeeded"]] == ["dave"]
    assert "dave" in employees(sandbox, enterprise)

    # One added to the demo's enterprise too: the next test must not see it.
    ok(call(sandbox, "POST", f"{MEMBER}/enterprise/{acme(sandbox)}/member", {"userList": [{"userName": "erin", "name": "Erin", "password": "Initial-Pass-5"}]}))
    assert "erin" in employees(sandbox, acme(sandbox))


def test_each_test_starts_from_the_seed(clean_sandbox: Sandbox) -> None:
    names = employees(clean_sandbox, acme(clean_sandbox))
    assert {"alice", "bob", "carol"} <= set(names) and "erin" not in names, names
    status, missing = call(clean_sandbox, "GET", f"{ORDER}/enterprise/user/query", channelCode="CH01", channelCustomerId="CC-GLOBEX", defaultCustomer="N")
    assert (status, missing.get("data") or []) in ((200, []), (299, [])), missing


def test_the_clock_moves_when_told(clean_sandbox: Sandbox) -> None:
    start = 1_767_225_600_000  # 2026-01-01T00:00:00Z
    clean_sandbox.set_clock(start, frozen=True)
    assert clean_sandbox.advance_clock(days=30)["now"] == start + 30 * 86_400_000
    assert clean_sandbox.clock()["now"] == start + 30 * 86_400_000


def test_a_fault_fires_as_scripted(clean_sandbox: Sandbox) -> None:
    rule = clean_sandbox.add_fault("allocateShellNums", {"kind": "code", "code": "500"}, times=1)
    status, failed = call(clean_sandbox, "POST", f"{ORDER}/shellnums", {"size": 1})
    assert (status, failed["code"]) == (299, "500"), failed
    assert len(ok(call(clean_sandbox, "POST", f"{ORDER}/shellnums", {"size": 1}))) == 1
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
