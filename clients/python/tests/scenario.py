"""Drives every operation of both services through the generated Python client against a
running ``licensing-sim`` (``LICENSING_SIM_URL``), asserting decoded values and business
codes. Run by ``cargo xtask clients --test``, which starts the simulator and then reads its
journal to confirm that every operation of the specs was answered.

The same story is told in TypeScript (``clients/typescript/test/scenario.ts``); keep the
two in step. Every business exception goes through the shipped templates: without them the
generated client raises ``ValueError: 299 is not a valid HTTPStatus`` on the first one.
It runs from the generated folder (``target/clients/python``), beside ``licensing.py`` and
the generated packages.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Literal, TypeVar

from licensing_member.api.assets import (
    configure_member_assets,
    lend_assets,
    list_asset_nums,
    list_asset_products,
    list_lent_locks,
)
from licensing_member.api.members import (
    add_members,
    delete_member,
    edit_member,
    list_members,
    reset_member_password,
)
from licensing_member.models import (
    AddMembersReply,
    AddMembersRequest,
    ConfigureAssetsRequest,
    EditMemberRequest,
    EnterpriseAsset,
    LendAssetsReply,
    LendAssetsRequest,
    LentLock,
    MemberListItem,
    MemberPage,
    NewMember,
    ResetMemberPasswordReply,
    ResetPasswordRequest,
)
from licensing_member.types import UNSET, Unset
from licensing_order.api.assets import allocate_shell_nums, disable_locks, enable_locks, list_virtual_assets
from licensing_order.api.enterprise import bind_enterprise, create_enterprise, query_enterprise, update_enterprise
from licensing_order.api.orders import batch_order
from licensing_order.models import (
    AllocateShellNumsRequest,
    Asset,
    AssetExtension,
    BatchOrderRequest,
    BatchOrderResultItem,
    BindEnterpriseRequest,
    CreateEnterpriseRequest,
    DefaultCustomer,
    DeleteAssetOrder,
    DeleteProductOrder,
    EnterpriseCustomer,
    LicenseType,
    LockRequest,
    NewBuyOrder,
    Product,
    RevokedAsset,
    RevokedProduct,
    RevokedProductAsset,
    UpdateEnterpriseRequest,
    VirtualAsset,
)
from licensing_order.types import UNSET as ORDER_UNSET
from licensing_order.types import Unset as OrderUnset
from licensing_sandbox_admin.api.journal import clear_journal
from licensing_sandbox_admin.api.state import load_builtin_seed
from licensing_sandbox_admin.models import SeedResult

from licensing import NONCE, BusinessError, Detailed, Envelope, check, member_client, order_client, sandbox_client

MISSING = "8999999999"
R = TypeVar("R", bound=Envelope)
T = TypeVar("T")

url = os.environ.get("LICENSING_SIM_URL") or sys.exit(
    "LICENSING_SIM_URL is not set (cargo xtask clients --test sets it)"
)
order = order_client(url, os.environ.get("LICENSING_APP_TOKEN", "sim-app-token"))
member = member_client(
    url,
    os.environ.get("LICENSING_CLIENT_TOKEN", "sim-client-token"),
    os.environ.get("LICENSING_USER_TOKEN", "sim-user-token"),
)
sandbox = sandbox_client(url)

step = 0


def say(text: str) -> None:
    global step
    step += 1
    print(f"{step:2}. {text}", flush=True)


def present(value: T | OrderUnset | Unset) -> T:
    """A reply's ``data``, asserted to be there (each generated package has its ``Unset``)."""
    assert not isinstance(value, (OrderUnset, Unset)), "no data in the reply"
    return value


def typed(value: object, kind: type[T]) -> T:
    """``value``, asserted to be decoded as ``kind``."""
    assert isinstance(value, kind), f"expected {kind}, got {value!r}"
    return value


def refused(response: Detailed[R], code: str) -> BusinessError[R]:
    """The business error a call must end with, with this code."""
    try:
        check(response)
    except BusinessError as error:
        assert error.status == 299, f"a business exception is HTTP 299, got {error.status}"
        assert error.code == code, f"expected {code}, got {error}"
        assert isinstance(error.reply.message, str)
        return error
    raise AssertionError(f"expected business error {code}, got success")


# ---------------------------------------------------------------- the sandbox
seeded = typed(load_builtin_seed.sync(name="demo", client=sandbox), SeedResult)
acme_seed = seeded.enterprises[0]
assert acme_seed.name == "Acme Robotics"
assert clear_journal.sync_detailed(client=sandbox).status_code == 204
say(f"sandbox: demo seed loaded ({acme_seed.enterprise_global_id}), journal cleared")

# ---------------------------------------------------------------- order service: enterprise
created = present(
    check(
        create_enterprise.sync_detailed(
            client=order,
            g_nonce=NONCE,
            body=CreateEnterpriseRequest(
                crm_customer_id="CRM-GLOBEX",
                customer_name="Globex Engineering",
                branch_name="South",
                address="12 Harbour Road",
            ),
        )
    ).data
)
eg = created.enterprise_global_id
assert eg.startswith("EG-"), eg
assert created.default_type is True
assert sorted(m.member_identity for m in created.members) == ["cloud_employee", "industry_admin"]
say(f"createEnterprise: {eg} with {len(created.members)} employees")

bind_body = BindEnterpriseRequest(
    channel_code="CH01",
    channel_customer_id="CC-GLOBEX",
    customer_name="Globex Engineering (CH01)",
    branch_name="South",
    enterprise_name="Globex Engineering",
    password_mobile="13800000000",
)
bound = present(check(bind_enterprise.sync_detailed(client=order, g_nonce=NONCE, body=bind_body)).data)
assert bound.enterprise_global_id == eg, "the customer joined the created enterprise"
assert bound.is_default is False
assert bound.channel_customer_id == "CC-GLOBEX"
cid = bound.customer_id
say(f"bindEnterprise: CH01/CC-GLOBEX is customer {cid}")

again = refused(bind_enterprise.sync_detailed(client=order, g_nonce=NONCE, body=bind_body), "13004")
assert "already bound" in (again.cause or ""), again
say(f"bindEnterprise again: HTTP 299, code {again.code} ({again.message})")


def query(default_customer: DefaultCustomer) -> list[EnterpriseCustomer]:
    return present(
        check(
            query_enterprise.sync_detailed(
                client=order,
                g_nonce=NONCE,
                channel_code="CH01",
                channel_customer_id="CC-GLOBEX",
                default_customer=default_customer,
            )
        ).data
    )


everyone_of_globex = query("N")
ours = [c for c in everyone_of_globex if c.channel_customer_id == "CC-GLOBEX"]
assert [(c.customer_id, c.enterprise_global_id) for c in ours] == [(cid, eg)]
defaults = query("Y")
assert len(defaults) == 1 and defaults[0].is_default and defaults[0].customer_id != cid
say(f"queryEnterprise: {len(everyone_of_globex)} customers (N), {len(defaults)} default (Y)")

updated = check(
    update_enterprise.sync_detailed(
        client=order,
        g_nonce=NONCE,
        body=UpdateEnterpriseRequest(
            crm_customer_id="CRM-GLOBEX",
            customer_name="Globex Engineering",
            branch_name="South Quay",
            address="1 Quay Street",
        ),
    )
)
assert (updated.code, updated.message) == (0, "success")
say("updateEnterprise: code 0")

# ---------------------------------------------------------------- order service: batch
numbers = present(
    check(allocate_shell_nums.sync_detailed(client=order, g_nonce=NONCE, body=AllocateShellNumsRequest(size=4))).data
)
assert len(numbers) == 4 and all(re.fullmatch(r"8[0-9]{9}", n) for n in numbers), numbers
assert sorted(numbers) == numbers, "increasing"
a, b, c, d = numbers
say(f"allocateShellNums: {', '.join(numbers)}")


def product(num: str, uri: str, nodes: int) -> Product:
    return Product(
        crm_product_id=f"P-{num}-{uri}",
        parent_crm_product_id=f"A-{num}",
        product_uri=uri,
        product_name=f"{uri} license",
        product_type="software",
        limit_concurrent=nodes,
        limit_time_duration=0,
        trial=0,
        trial_end_date=0,
        time_unit="year",
        time_unit_quantity=1,
        time_duration_expression="1-0-0",
        product_features=[],
    )


def new_buy(
    sequence: int, license_type: LicenseType, asset: Asset, src_license_order_id: str | None = None
) -> NewBuyOrder:
    new = NewBuyOrder(
        sequence=sequence,
        customer_id=cid,
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
        enterprise_global_id=eg,
        license_type=license_type,
        order_type="new_buy",
        assets=[asset],
    )
    if src_license_order_id is not None:
        new.src_license_order_id = src_license_order_id
    return new


def batch(
    channel_order_id: str, orders: list[NewBuyOrder | DeleteAssetOrder | DeleteProductOrder]
) -> list[BatchOrderResultItem]:
    results = present(
        check(
            batch_order.sync_detailed(
                client=order,
                g_nonce=NONCE,
                app_key="scenario-python",
                body=BatchOrderRequest(
                    channel_code="CH01", channel_order_id=channel_order_id, sync_mode="sync", order_list=orders
                ),
            )
        ).data
    )
    assert sorted(r.sequence for r in results) == sorted(o.sequence for o in orders), "one result per order"
    for r in results:
        assert r.license_order_id.startswith("LO-") and r.customer_id == cid, r
    return results


mid_month = batch(
    "CO-2026-01-17",
    [
        new_buy(
            1, "normal_recover_usbkey", Asset(asset_nos=[a], products=[product(a, "CAD", 5), product(a, "RENDER", 2)])
        ),
        new_buy(2, "normal_recover_usbkey", Asset(asset_nos=[b], products=[product(b, "CAD", 5)])),
    ],
)
order_of_a = next(r.license_order_id for r in mid_month if r.sequence == 1)
say(f"batchOrder (new_buy x2): {', '.join(r.license_order_id for r in mid_month)}")

cloud_asset = Asset(
    asset_nos=[d],
    asset_extend_list=[AssetExtension(extend_code="gxxp", extend_value="true")],
    products=[product(d, "CLOUD", 10)],
)
month_end = batch(
    "CO-2026-01-31",
    [
        new_buy(1, "normal_recover_usbkey", Asset(asset_nos=[c], products=[product(c, "VIEWER", 1)])),
        new_buy(2, "cloud_customer", cloud_asset, order_of_a),
        DeleteAssetOrder(
            sequence=3,
            customer_id=cid,
            enterprise_global_id=eg,
            license_type="normal_recover_usbkey",
            order_type="delete_asset",
            assets=[RevokedAsset(asset_nos=[b])],
        ),
        DeleteProductOrder(
            sequence=4,
            customer_id=cid,
            enterprise_global_id=eg,
            license_type="normal_recover_usbkey",
            order_type="delete_product",
            src_license_order_id=order_of_a,
            assets=[
                RevokedProductAsset(
                    asset_nos=[a],
                    products=[RevokedProduct(crm_product_id=f"P-{a}-RENDER", product_uri="RENDER", limit_concurrent=2)],
                )
            ],
        ),
    ],
)
say(f"batchOrder (new_buy x2, delete_asset, delete_product): {len(month_end)} results")

# ---------------------------------------------------------------- order service: assets, locks


def virtual(extend_code: str | OrderUnset = ORDER_UNSET) -> list[VirtualAsset]:
    return present(
        check(list_virtual_assets.sync_detailed(eg, client=order, g_nonce=NONCE, extend_code=extend_code)).data
    )


cloud = virtual(extend_code="gxxp")
assert len(cloud) == 1, cloud
va = cloud[0]
assert (va.asset_num, va.license_type, va.customer_id, va.key_chip_type) == (d, "cloud_customer", cid, 2)
assert va.borrowed_usb_key is False
assert [(e.extend_code, e.extend_value) for e in va.asset_extends] == [("gxxp", "true")]
assert virtual(extend_code="none-such") == []
assert len(virtual()) == 1
say(f"listVirtualAssets: {va.asset_num} ({va.license_type}, {va.id})")


def locks(action: Literal["disable", "enable"], nums: list[str]) -> dict[str, int]:
    body = LockRequest(asset_nums=nums, operator_identity="ops@example.com")
    if action == "disable":
        results = present(check(disable_locks.sync_detailed(client=order, g_nonce=NONCE, body=body)).data)
    else:
        results = present(check(enable_locks.sync_detailed(client=order, g_nonce=NONCE, body=body)).data)
    return {r.asset_num: r.status for r in results}


assert locks("disable", [a, b, d, MISSING]) == {a: 1, b: 2, d: 4, MISSING: 2}  # b revoked; d is no lock
assert locks("enable", [a, c]) == {a: 1, c: 1}
say("disableLocks / enableLocks: statuses 1, 2, 4, 2 / 1, 1")

# ---------------------------------------------------------------- member center: employees


def add(*users: NewMember) -> Detailed[AddMembersReply]:
    return add_members.sync_detailed(eg, client=member, g_nonce=NONCE, body=AddMembersRequest(user_list=list(users)))


partial = refused(
    add(
        NewMember(
            user_name="dave",
            name="Dave",
            password="Initial-Pass-4",
            remark="night shift",
            password_mobile="13900000000",
            department_id=7,
        ),
        NewMember(user_name="erin", name="Erin", password="Initial-Pass-5"),
        NewMember(user_name="bad_name", name="Mallory", password="Initial-Pass-6"),
    ),
    "60027",
)
result = present(partial.reply.data)
assert [m.user_name.split("@")[0] for m in result.succeeded] == ["dave", "erin"]
dave, erin = result.succeeded
assert (dave.department_id, dave.remark, dave.deleted) == (7, "night shift", False)
assert isinstance(dave.id, int)
assert [f.user_name.split("@")[0] for f in result.failed] == ["bad_name"]
assert "letters and digits" in result.failed[0].message
say(f"addMembers: HTTP 299, 60027; added {len(result.succeeded)}, refused {result.failed[0].user_name}")

refused(add(NewMember(user_name="gina", name="Gina", password="abc")), "50003")
gina = present(check(add(NewMember(user_name="gina", name="Gina", password="Initial-Pass-7"))).data)
assert len(gina.succeeded) == 1 and gina.failed == []
say("addMembers: 50003 for a 3-character password, code 0 with a longer one")


def page(page_num: int, keyword: str | Unset = UNSET) -> MemberPage:
    response = list_members.sync_detailed(
        eg, client=member, g_nonce=NONCE, page_num=page_num, page_size=2, keyword=keyword
    )
    return present(check(response).data)


everyone: list[MemberListItem] = []
pages = 0
while True:
    p = page(pages + 1)
    pages += 1
    assert p.page_num == pages and p.size == len(p.list_)
    everyone.extend(p.list_)
    if not p.has_next_page:
        assert p.is_last_page and p.total == len(everyone) and p.pages == pages
        break
assert len(everyone) == 5, "the two employees created with the enterprise, dave, erin and gina"
assert len({m.global_id for m in everyone}) == len(everyone)
assert page(pages + 1).list_ == []
say(f"listMembers: {len(everyone)} employees over {pages} pages of 2")

check(
    edit_member.sync_detailed(
        eg,
        dave.global_id,
        client=member,
        g_nonce=NONCE,
        body=EditMemberRequest(user_name="dave", name="Dave Smith", department_id=8, remark="day shift"),
    )
)
found = page(1, keyword="smith").list_
assert [(m.name, m.department_id, m.remark, m.password_mobile) for m in found] == [
    ("Dave Smith", 8, "day shift", "13900000000")
]
say("editMember: name, department and remark changed")


def reset(password: str) -> Detailed[ResetMemberPasswordReply]:
    body = ResetPasswordRequest(password=password)
    return reset_member_password.sync_detailed(eg, erin.global_id, client=member, g_nonce=NONCE, body=body)


refused(reset("abc"), "50003")
check(reset("New-Pass-2026"))
say("resetMemberPassword: 50003 for a short one, then code 0")

check(delete_member.sync_detailed(eg, erin.global_id, client=member, g_nonce=NONCE))
gone = refused(delete_member.sync_detailed(eg, erin.global_id, client=member, g_nonce=NONCE), "60002")
say(f"deleteMember: code 0, then {gone.code} ({gone.message})")

# ---------------------------------------------------------------- member center: assets, lending


def asset_nums(enterprise_global_id: str) -> list[EnterpriseAsset]:
    return present(check(list_asset_nums.sync_detailed(enterprise_global_id, client=member, g_nonce=NONCE)).data)


def products(asset_id: str) -> list[str]:
    listed = present(check(list_asset_products.sync_detailed(asset_id, client=member, g_nonce=NONCE)).data)
    return sorted(i.product_uri for i in listed.product_instance_list)


globex_assets = asset_nums(eg)
assert sorted(x.asset_num for x in globex_assets) == [a, c, d]
asset_a = next(x for x in globex_assets if x.asset_num == a)
assert products(asset_a.asset_id) == ["CAD"], "RENDER was revoked"
say(f"listAssetNums: {a}, {c}, {d}; listAssetProducts({asset_a.asset_id}): CAD")

acme = acme_seed.enterprise_global_id


def lent_locks() -> list[LentLock]:
    return present(check(list_lent_locks.sync_detailed(acme, client=member, g_nonce=NONCE)).data)


lent = lent_locks()
assert len(lent) == 1
lent_lock = lent[0]
assert lent_lock.asset_num == acme_seed.assets["lent-lock"].asset_num
assert lent_lock.borrowed_flag is False and lent_lock.cloud_account_global_id is None
say(f"listLentLocks: {lent_lock.asset_num}, not lent")

carol, alice = acme_seed.members["carol"], acme_seed.members["alice"]
bobs_lock = acme_seed.assets["cad-lock-2"]
check(
    configure_member_assets.sync_detailed(
        carol,
        client=member,
        g_nonce=NONCE,
        body=ConfigureAssetsRequest(add_assets=[bobs_lock.asset_num], delete_assets=[]),
    )
)
held = next(x for x in asset_nums(acme) if x.asset_num == bobs_lock.asset_num)
assert held.cloud_account_global_id == carol
say(f"configureMemberAssets: {bobs_lock.asset_num} assigned to carol")


def lend(member_global_id: str, asset_id: str) -> Detailed[LendAssetsReply]:
    body = LendAssetsRequest(borrowed_usb_key=lent_lock.asset_num, asset_i_ds=[asset_id])
    return lend_assets.sync_detailed(member_global_id, client=member, g_nonce=NONCE, body=body)


assert locks("disable", [lent_lock.asset_num]) == {lent_lock.asset_num: 1}
disabled = refused(lend(carol, bobs_lock.asset_id), "33008")
assert disabled.message
assert locks("enable", [lent_lock.asset_num]) == {lent_lock.asset_num: 1}
check(lend(carol, bobs_lock.asset_id))
say("lendAssets: 33008 into the disabled lent lock, code 0 once enabled")

loans = lent_locks()
assert (loans[0].borrowed_flag, loans[0].cloud_account_global_id) == (True, carol)
assert products(lent_lock.asset_id) == ["cad", "viewer"]
refused(lend(alice, acme_seed.assets["cad-lock-1"].asset_id), "33018")
say("listLentLocks: lent to carol; the lent lock carries cad and viewer; alice refused (33018)")

print(f"scenario ok: {step} steps")
