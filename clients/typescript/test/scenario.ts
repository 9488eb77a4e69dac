/**
 * Drives every operation of both services through the generated TypeScript client against
 * a running `licensing-sim` (`LICENSING_SIM_URL`), asserting decoded values and business
 * codes. Run by `cargo xtask clients --test`, which starts the simulator, type-checks this
 * file with `tsc --noEmit` and then reads the simulator's journal to confirm that every
 * operation of the specs was answered.
 *
 * The same story is told in Python (`clients/python/tests/scenario.py`); keep the two in step.
 * It runs from the generated folder (`target/clients/typescript`), beside `licensing.ts` and
 * `generated/`, which its imports name.
 */
import assert from "node:assert/strict";

import type { operations as MemberOperations } from "./generated/member.js";
import type { operations as OrderOperations } from "./generated/order.js";
import {
  BusinessError,
  type Envelope,
  type Fetched,
  type MemberErrorCode,
  type MemberSchemas,
  type OrderErrorCode,
  type OrderSchemas,
  memberClient,
  orderClient,
  outcome,
  sandboxClient,
  unwrap,
} from "./licensing.js";

// Treating the body of an HTTP 299 as the operation's envelope is sound only while every
// operation's 299 response has the same schema as its 200 response: checked here, at
// compile time, for all nineteen operations.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Json<Op, Status extends number> = Op extends {
  responses: { [S in Status]: { content: { "application/json": infer Body } } };
}
  ? Body
  : never;
type Agrees<Op> = [Json<Op, 299>] extends [never] ? false : Same<Json<Op, 200>, Json<Op, 299>>;
type EnvelopesAgree<Ops> = false extends { [Id in keyof Ops]: Agrees<Ops[Id]> }[keyof Ops] ? false : true;
const orderEnvelopesAgree: EnvelopesAgree<OrderOperations> = true;
const memberEnvelopesAgree: EnvelopesAgree<MemberOperations> = true;
assert.ok(orderEnvelopesAgree && memberEnvelopesAgree);

const url = required("LICENSING_SIM_URL");
const order = orderClient(url, process.env.LICENSING_APP_TOKEN ?? "sim-app-token");
const member = memberClient(
  url,
  process.env.LICENSING_CLIENT_TOKEN ?? "sim-client-token",
  process.env.LICENSING_USER_TOKEN ?? "sim-user-token",
);
const sandbox = sandboxClient(url);

const MISSING = "8999999999";
let step = 0;
function say(text: string): void {
  step += 1;
  console.log(`${String(step).padStart(2)}. ${text}`);
}

/** The business error a call must end with, and its code. */
async function refused<Reply extends Envelope>(
  call: Promise<Fetched<Reply>>,
  code: string,
): Promise<BusinessError<Reply>> {
  const result = await outcome(call);
  assert.ok(!result.ok, `expected business error ${code}, got success`);
  assert.ok(result.error instanceof BusinessError);
  assert.equal(result.error.status, 299, "a business exception is HTTP 299");
  assert.equal(result.error.code, code);
  return result.error;
}

// ---------------------------------------------------------------- the sandbox
const { data: seeded, response: seedResponse } = await sandbox.POST("/__sandbox/v1/seeds/{name}", {
  params: { path: { name: "demo" } },
});
assert.equal(seedResponse.status, 200);
assert.ok(seeded);
const acmeSeed = seeded.enterprises[0];
assert.ok(acmeSeed);
assert.equal(acmeSeed.name, "Acme Robotics");
const cleared = await sandbox.DELETE("/__sandbox/v1/journal");
assert.equal(cleared.response.status, 204);
say(`sandbox: demo seed loaded (${acmeSeed.enterpriseGlobalId}), journal cleared`);

// ---------------------------------------------------------------- order service: enterprise
const created = await unwrap(
  order.POST("/order/api/order/v1/enterprise/user/create", {
    body: {
      crmCustomerId: "CRM-GLOBEX",
      customerName: "Globex Engineering",
      branchName: "South",
      address: "12 Harbour Road",
    },
  }),
);
assert.ok(created);
const eg = created.enterpriseGlobalId;
assert.match(eg, /^EG-/);
assert.equal(created.defaultType, true);
assert.deepEqual(created.members.map((m) => m.memberIdentity).sort(), ["cloud_employee", "industry_admin"]);
say(`createEnterprise: ${eg} with ${created.members.length} employees`);

const bindBody: OrderSchemas["BindEnterpriseRequest"] = {
  channelCode: "CH01",
  channelCustomerId: "CC-GLOBEX",
  customerName: "Globex Engineering (CH01)",
  branchName: "South",
  enterpriseName: "Globex Engineering",
  passwordMobile: "13800000000",
};
const bound = await unwrap(order.POST("/order/api/order/v1/enterprise/user/bind", { body: bindBody }));
assert.ok(bound);
assert.equal(bound.enterpriseGlobalId, eg, "the customer joined the created enterprise");
assert.equal(bound.isDefault, false);
assert.equal(bound.channelCustomerId, "CC-GLOBEX");
const cid = bound.customerId;
say(`bindEnterprise: CH01/CC-GLOBEX is customer ${cid}`);

const again = await refused(
  order.POST("/order/api/order/v1/enterprise/user/bind", { body: bindBody }),
  "13004" satisfies OrderErrorCode,
);
assert.match(again.message, /13004/);
assert.equal(typeof again.reply.message, "string");
say(`bindEnterprise again: HTTP 299, code ${again.code} (${again.reply.message})`);

const query = (defaultCustomer: OrderSchemas["DefaultCustomer"]) =>
  unwrap(
    order.GET("/order/api/order/v1/enterprise/user/query", {
      params: { query: { channelCode: "CH01", channelCustomerId: "CC-GLOBEX", defaultCustomer } },
    }),
  );
const all = (await query("N")) ?? [];
const ours = all.find((c) => c.channelCustomerId === "CC-GLOBEX");
assert.equal(ours?.customerId, cid);
assert.equal(ours?.enterpriseGlobalId, eg);
const defaults = (await query("Y")) ?? [];
assert.equal(defaults.length, 1);
assert.equal(defaults[0]?.isDefault, true);
assert.notEqual(defaults[0]?.customerId, cid);
say(`queryEnterprise: ${all.length} customers (N), ${defaults.length} default (Y)`);

const updated = await outcome(
  order.POST("/order/api/order/v1/enterprise/user/update", {
    body: {
      crmCustomerId: "CRM-GLOBEX",
      customerName: "Globex Engineering",
      branchName: "South Quay",
      address: "1 Quay Street",
    },
  }),
);
assert.ok(updated.ok);
assert.equal(updated.reply.code, 0);
assert.equal(updated.reply.message, "success");
say("updateEnterprise: code 0");

// ---------------------------------------------------------------- order service: batch
const numbers = (await unwrap(order.POST("/order/api/order/v1/shellnums", { body: { size: 4 } }))) ?? [];
assert.equal(numbers.length, 4);
for (const n of numbers) assert.match(n, /^8[0-9]{9}$/);
assert.deepEqual([...numbers].sort(), numbers, "increasing");
const [a, b, c, d] = numbers as [string, string, string, string];
say(`allocateShellNums: ${numbers.join(", ")}`);

const product = (num: string, uri: string, nodes: number): OrderSchemas["Product"] => ({
  crmProductId: `P-${num}-${uri}`,
  parentCrmProductId: `A-${num}`,
  productUri: uri,
  productName: `${uri} license`,
  productType: "software",
  limitConcurrent: nodes,
  limitTimeDuration: 0,
  trial: 0,
  trialEndDate: 0,
  timeUnit: "year",
  timeUnitQuantity: 1,
  timeDurationExpression: "1-0-0",
  productFeatures: [],
});
const newBuy = (
  sequence: number,
  licenseType: OrderSchemas["LicenseType"],
  asset: OrderSchemas["Asset"],
  srcLicenseOrderId?: string,
): OrderSchemas["NewBuyOrder"] => ({
  sequence,
  customerId: cid,
  crmCustomerId: "CRM-GLOBEX",
  customerName: "Globex Engineering",
  channelCustomerId: "CC-GLOBEX",
  adminName: "Ada Admin",
  adminAccount: "ada",
  adminEmail: "ada@example.com",
  adminCellNumber: "13800000000",
  passwordMobile: "13800000000",
  address: "12 Harbour Road",
  customerType: "company",
  branchCode: "BR01",
  branchName: "South",
  enterpriseGlobalId: eg,
  licenseType,
  orderType: "new_buy",
  assets: [asset],
  ...(srcLicenseOrderId === undefined ? {} : { srcLicenseOrderId }),
});
const batch = async (channelOrderId: string, orderList: OrderSchemas["LicenseOrder"][]) => {
  const results =
    (await unwrap(
      order.POST("/order/api/order/v1/licenseOrder/batchOrder", {
        params: { query: { appKey: "scenario-typescript" } },
        body: { channelCode: "CH01", channelOrderId, syncMode: "sync", orderList },
      }),
    )) ?? [];
  assert.deepEqual(
    results.map((r) => r.sequence).sort(),
    orderList.map((o) => o.sequence).sort(),
    "one result per order",
  );
  for (const r of results) {
    assert.match(r.licenseOrderId, /^LO-/);
    assert.equal(r.customerId, cid);
  }
  return results;
};

const midMonth = await batch("CO-2026-01-17", [
  newBuy(1, "normal_recover_usbkey", {
    assetNos: [a],
    products: [product(a, "CAD", 5), product(a, "RENDER", 2)],
  }),
  newBuy(2, "normal_recover_usbkey", { assetNos: [b], products: [product(b, "CAD", 5)] }),
]);
const orderOfA = midMonth.find((r) => r.sequence === 1)?.licenseOrderId;
assert.ok(orderOfA);
say(`batchOrder (new_buy x2): ${midMonth.map((r) => r.licenseOrderId).join(", ")}`);

const monthEnd = await batch("CO-2026-01-31", [
  newBuy(1, "normal_recover_usbkey", { assetNos: [c], products: [product(c, "VIEWER", 1)] }),
  newBuy(
    2,
    "cloud_customer",
    {
      assetNos: [d],
      assetExtendList: [{ extendCode: "gxxp", extendValue: "true" }],
      products: [product(d, "CLOUD", 10)],
    },
    orderOfA,
  ),
  {
    sequence: 3,
    customerId: cid,
    enterpriseGlobalId: eg,
    licenseType: "normal_recover_usbkey",
    orderType: "delete_asset",
    assets: [{ assetNos: [b] }],
  },
  {
    sequence: 4,
    customerId: cid,
    enterpriseGlobalId: eg,
    licenseType: "normal_recover_usbkey",
    orderType: "delete_product",
    srcLicenseOrderId: orderOfA,
    assets: [{ assetNos: [a], products: [{ crmProductId: `P-${a}-RENDER`, productUri: "RENDER", limitConcurrent: 2 }] }],
  },
]);
say(`batchOrder (new_buy x2, delete_asset, delete_product): ${monthEnd.length} results`);

// ---------------------------------------------------------------- order service: assets, locks
const virtual = (extendCode?: string) =>
  unwrap(
    order.GET("/order/api/order/v1/asset/{enterpriseGlobalId}/list", {
      params: { path: { enterpriseGlobalId: eg }, query: extendCode === undefined ? {} : { extendCode } },
    }),
  );
const cloud = (await virtual("gxxp")) ?? [];
assert.equal(cloud.length, 1);
const [va] = cloud as [OrderSchemas["VirtualAsset"]];
assert.equal(va.assetNum, d);
assert.equal(va.licenseType, "cloud_customer");
assert.equal(va.customerId, cid);
assert.equal(va.keyChipType, 2);
assert.equal(va.borrowedUsbKey, false);
assert.deepEqual(va.assetExtends, [{ extendCode: "gxxp", extendValue: "true" }]);
assert.deepEqual((await virtual("none-such")) ?? [], []);
assert.equal(((await virtual()) ?? []).length, 1);
say(`listVirtualAssets: ${va.assetNum} (${va.licenseType}, ${va.id})`);

const locks = (path: "/order/api/order/v1/asset/lock" | "/order/api/order/v1/asset/unlock", assetNums: string[]) =>
  unwrap(order.POST(path, { body: { assetNums, operatorIdentity: "ops@example.com" } }));
const statuses = (results: OrderSchemas["LockResultItem"][] | undefined) =>
  Object.fromEntries((results ?? []).map((r) => [r.assetNum, r.status]));
assert.deepEqual(statuses(await locks("/order/api/order/v1/asset/lock", [a, b, d, MISSING])), {
  [a]: 1,
  [b]: 2, // revoked by delete_asset
  [d]: 4, // a cloud asset is no lock
  [MISSING]: 2,
});
assert.deepEqual(statuses(await locks("/order/api/order/v1/asset/unlock", [a, c])), { [a]: 1, [c]: 1 });
say("disableLocks / enableLocks: statuses 1, 2, 4, 2 / 1, 1");

// ---------------------------------------------------------------- member center: employees
const membersPath = "/me/api/v1/enterprise/{enterpriseGlobalId}/member" as const;
const partial = await refused(
  member.POST(membersPath, {
    params: { path: { enterpriseGlobalId: eg } },
    body: {
      userList: [
        {
          userName: "dave",
          name: "Dave",
          password: "Initial-Pass-4",
          remark: "night shift",
          passwordMobile: "13900000000",
          departmentId: 7,
        },
        { userName: "erin", name: "Erin", password: "Initial-Pass-5" },
        { userName: "bad_name", name: "Mallory", password: "Initial-Pass-6" },
      ],
    },
  }),
  "60027" satisfies MemberErrorCode,
);
const result = partial.reply.data;
assert.ok(result, "a partial failure carries both lists");
assert.deepEqual(
  result.succeeded.map((m) => m.userName.split("@")[0]),
  ["dave", "erin"],
);
const dave = result.succeeded[0] as MemberSchemas["Member"];
assert.equal(dave.departmentId, 7);
assert.equal(dave.remark, "night shift");
assert.equal(dave.deleted, false);
assert.equal(typeof dave.id, "number");
assert.equal(result.failed.length, 1);
assert.equal(result.failed[0]?.userName.split("@")[0], "bad_name");
assert.match(result.failed[0]?.message ?? "", /letters and digits/);
say(`addMembers: HTTP 299, 60027; added ${result.succeeded.length}, refused ${result.failed[0]?.userName}`);

const erin = result.succeeded[1] as MemberSchemas["Member"];
await refused(
  member.POST(membersPath, {
    params: { path: { enterpriseGlobalId: eg } },
    body: { userList: [{ userName: "gina", name: "Gina", password: "abc" }] },
  }),
  "50003",
);
const gina = await unwrap(
  member.POST(membersPath, {
    params: { path: { enterpriseGlobalId: eg } },
    body: { userList: [{ userName: "gina", name: "Gina", password: "Initial-Pass-7" }] },
  }),
);
assert.equal(gina?.succeeded.length, 1);
assert.deepEqual(gina?.failed, []);
say("addMembers: 50003 for a 3-character password, code 0 with a longer one");

const page = (pageNum: number, keyword?: string) =>
  unwrap(
    member.GET("/me/api/v1/enterprise/{enterpriseGlobalId}/members", {
      params: {
        path: { enterpriseGlobalId: eg },
        query: { pageNum, pageSize: 2, ...(keyword === undefined ? {} : { keyword }) },
      },
    }),
  );
const everyone: MemberSchemas["MemberListItem"][] = [];
let pages = 0;
for (let n = 1; ; n += 1) {
  const p = await page(n);
  assert.ok(p);
  pages += 1;
  assert.equal(p.pageNum, n);
  assert.equal(p.size, p.list.length);
  everyone.push(...p.list);
  if (!p.hasNextPage) {
    assert.equal(p.isLastPage, true);
    assert.equal(p.total, everyone.length);
    assert.equal(p.pages, pages);
    break;
  }
}
assert.equal(everyone.length, 5, "the two employees created with the enterprise, dave, erin and gina");
assert.equal(new Set(everyone.map((m) => m.globalId)).size, everyone.length);
const past = await page(pages + 1);
assert.deepEqual(past?.list, []);
say(`listMembers: ${everyone.length} employees over ${pages} pages of 2`);

const memberPath = "/me/api/v1/enterprise/{enterpriseGlobalId}/member/{memberGlobalId}" as const;
const edited = await outcome(
  member.PUT(memberPath, {
    params: { path: { enterpriseGlobalId: eg, memberGlobalId: dave.globalId } },
    body: { userName: "dave", name: "Dave Smith", departmentId: 8, remark: "day shift" },
  }),
);
assert.ok(edited.ok);
const found = (await page(1, "smith"))?.list ?? [];
assert.equal(found.length, 1);
assert.equal(found[0]?.name, "Dave Smith");
assert.equal(found[0]?.departmentId, 8);
assert.equal(found[0]?.remark, "day shift");
assert.equal(found[0]?.passwordMobile, "13900000000");
say("editMember: name, department and remark changed");

const resetPath = "/me/api/v1/enterprise/{enterpriseGlobalId}/member/{memberGlobalId}/resetPassword" as const;
const erinPath = { path: { enterpriseGlobalId: eg, memberGlobalId: erin.globalId } };
await refused(member.PUT(resetPath, { params: erinPath, body: { password: "abc" } }), "50003");
const reset = await outcome(member.PUT(resetPath, { params: erinPath, body: { password: "New-Pass-2026" } }));
assert.ok(reset.ok);
say("resetMemberPassword: 50003 for a short one, then code 0");

assert.ok((await outcome(member.DELETE(memberPath, { params: erinPath }))).ok);
const gone = await refused(member.DELETE(memberPath, { params: erinPath }), "60002");
say(`deleteMember: code 0, then ${gone.code} (${gone.reply.message})`);

// ---------------------------------------------------------------- member center: assets, lending
const assetNums = async (enterpriseGlobalId: string) =>
  (await unwrap(
    member.GET("/me/api/v1/enterprise/{enterpriseGlobalId}/asset/assetNums", {
      params: { path: { enterpriseGlobalId } },
    }),
  )) ?? [];
const products = async (assetId: string) => {
  const p = await unwrap(
    member.GET("/me/api/v1/enterprise/asset/{assetId}/merchandiseProducts", { params: { path: { assetId } } }),
  );
  assert.ok(p);
  return p.productInstanceList.map((i) => i.productUri).sort();
};
const globexAssets = await assetNums(eg);
assert.deepEqual(globexAssets.map((x) => x.assetNum).sort(), [a, c, d]);
const assetA = globexAssets.find((x) => x.assetNum === a);
assert.ok(assetA);
assert.deepEqual(await products(assetA.assetId), ["CAD"], "RENDER was revoked");
say(`listAssetNums: ${a}, ${c}, ${d}; listAssetProducts(${assetA.assetId}): CAD`);

const acme = acmeSeed.enterpriseGlobalId;
const lent = (await unwrap(
  member.GET("/me/api/v1/enterprise/{enterpriseGlobalId}/asset/borrowUsbKeys", {
    params: { path: { enterpriseGlobalId: acme } },
  }),
)) ?? [];
assert.equal(lent.length, 1);
const lentLock = lent[0] as MemberSchemas["LentLock"];
assert.equal(lentLock.assetNum, acmeSeed.assets["lent-lock"]?.assetNum);
assert.equal(lentLock.borrowedFlag, false);
assert.equal(lentLock.cloudAccountGlobalId, null);
say(`listLentLocks: ${lentLock.assetNum}, not lent`);

const carol = acmeSeed.members["carol"];
const alice = acmeSeed.members["alice"];
const bobsLock = acmeSeed.assets["cad-lock-2"];
assert.ok(carol && alice && bobsLock);
const configured = await outcome(
  member.POST("/me/api/v1/enterprise/member/{memberGlobalId}/privileges", {
    params: { path: { memberGlobalId: carol } },
    body: { addAssets: [bobsLock.assetNum], deleteAssets: [] },
  }),
);
assert.ok(configured.ok);
const held = (await assetNums(acme)).find((x) => x.assetNum === bobsLock.assetNum);
assert.equal(held?.cloudAccountGlobalId, carol);
say(`configureMemberAssets: ${bobsLock.assetNum} assigned to carol`);

const lend = (memberGlobalId: string, assetId: string) =>
  member.POST("/me/api/v1/enterprise/member/{memberGlobalId}/borrow", {
    params: { path: { memberGlobalId } },
    body: { borrowedUsbKey: lentLock.assetNum, assetIDs: [assetId] },
  });
assert.deepEqual(statuses(await locks("/order/api/order/v1/asset/lock", [lentLock.assetNum])), {
  [lentLock.assetNum]: 1,
});
const disabled = await refused(lend(carol, bobsLock.assetId), "33008");
assert.ok(disabled.reply.message.length > 0);
assert.deepEqual(statuses(await locks("/order/api/order/v1/asset/unlock", [lentLock.assetNum])), {
  [lentLock.assetNum]: 1,
});
assert.ok((await outcome(lend(carol, bobsLock.assetId))).ok);
say("lendAssets: 33008 into the disabled lent lock, code 0 once enabled");

const loans = (await unwrap(
  member.GET("/me/api/v1/enterprise/{enterpriseGlobalId}/asset/borrowUsbKeys", {
    params: { path: { enterpriseGlobalId: acme } },
  }),
)) ?? [];
assert.equal(loans[0]?.borrowedFlag, true);
assert.equal(loans[0]?.cloudAccountGlobalId, carol);
assert.deepEqual(await products(lentLock.assetId), ["cad", "viewer"]);
const alicesLock = acmeSeed.assets["cad-lock-1"];
assert.ok(alicesLock);
await refused(lend(alice, alicesLock.assetId), "33018");
say("listLentLocks: lent to carol; the lent lock carries cad and viewer; alice refused (33018)");

console.log(`scenario ok: ${step} steps`);

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(`${name} is not set (cargo xtask clients --test sets it)`);
  }
  return value;
}
