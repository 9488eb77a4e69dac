// A partner's first suite on the licensing-sandbox npm package: the services called with
// fetch, the simulator from `startSandbox`, restored before each test. `cargo xtask dist
// --check` runs it in a fresh npm project, with no Rust toolchain on PATH, as
//
//   node --test story.test.mjs        (LICENSING_EXAMPLE_COVERAGE=coverage.md)
//
// Each test starts from the demo seed (Acme Robotics: alice, bob, carol) whatever the
// tests before it did.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { after, before, beforeEach, test } from "node:test";

import { Sandbox, SandboxError, startSandbox } from "licensing-sandbox";

const ORDER = "/order/api/order/v1";
const MEMBER = "/me/api/v1";

let sandbox;
before(async () => {
  sandbox = await startSandbox({ seed: "demo", journalCapacity: 100000 });
  // For check_lifecycle.mjs: the simulator's PID, to see that it is gone afterwards.
  if (process.env.LICENSING_EXAMPLE_PID_FILE) writeFileSync(process.env.LICENSING_EXAMPLE_PID_FILE, String(sandbox.pid));
});
beforeEach(() => sandbox.restore());
after(async () => {
  if (process.env.LICENSING_EXAMPLE_COVERAGE) await sandbox.coverage({ path: process.env.LICENSING_EXAMPLE_COVERAGE });
  await sandbox.stop();
});

/** One request to either service with what every request needs: a fresh g_nonce, the
 * service's credentials, the order service's Content-Type on every request. */
async function call(method, path, body, query = {}) {
  const params = new URLSearchParams({ ...query, g_nonce: randomBytes(24).toString("base64url") });
  const headers = {};
  if (path.startsWith(ORDER)) {
    headers.authorization = `Bearer ${sandbox.tokens.app}`;
    headers["content-type"] = "application/json";
  } else {
    headers.authorization = `Bearer ${sandbox.tokens.client}`;
    headers.clienttoken = sandbox.tokens.client;
    headers.usertoken = sandbox.tokens.user;
    if (body !== undefined) headers["content-type"] = "application/json";
  }
  const reply = await fetch(`${sandbox.url}${path}?${params}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  return { status: reply.status, envelope: await reply.json() };
}

/** The data of a success; anything else fails the test with the envelope. */
function ok({ status, envelope }) {
  assert.deepEqual([status, envelope.code], [200, 0], JSON.stringify(envelope));
  return envelope.data;
}

function newBuy(sequence, enterprise, customer, number, product) {
  return {
    sequence,
    orderType: "new_buy",
    licenseType: "normal_recover_usbkey",
    enterpriseGlobalId: enterprise,
    customerId: customer,
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
    assets: [
      {
        assetNos: [number],
        products: [
          {
            crmProductId: `P-${number}`,
            parentCrmProductId: `A-${number}`,
            productUri: product,
            productName: `${product} license`,
            productType: "software",
            limitConcurrent: 5,
            limitTimeDuration: 0,
            trial: 0,
            trialEndDate: 0,
            timeUnit: "year",
            timeUnitQuantity: 1,
            timeDurationExpression: "1-0-0",
            productFeatures: [],
          },
        ],
      },
    ],
  };
}

async function batch(channelOrderId, orders) {
  const body = { channelCode: "CH01", channelOrderId, syncMode: "sync", orderList: orders };
  const results = ok(await call("POST", `${ORDER}/licenseOrder/batchOrder`, body, { appKey: "example" }));
  assert.deepEqual(results.map((r) => r.sequence).sort(), orders.map((o) => o.sequence));
  return results;
}

async function employees(enterprise) {
  const page = ok(await call("GET", `${MEMBER}/enterprise/${enterprise}/members`, undefined, { pageNum: 1, pageSize: 100 }));
  return page.list.map((m) => m.userName.split("@")[0]).sort();
}

async function acme() {
  const query = { channelCode: "CH01", channelCustomerId: "CC-ACME", defaultCustomer: "N" };
  return ok(await call("GET", `${ORDER}/enterprise/user/query`, undefined, query))[0].enterpriseGlobalId;
}

test("a partner's story", async () => {
  const created = ok(
    await call("POST", `${ORDER}/enterprise/user/create`, {
      crmCustomerId: "CRM-GLOBEX",
      customerName: "Globex Engineering",
      branchName: "South",
    }),
  );
  const enterprise = created.enterpriseGlobalId;
  const bind = {
    channelCode: "CH01",
    channelCustomerId: "CC-GLOBEX",
    customerName: "Globex Engineering (CH01)",
    branchName: "South",
    enterpriseName: "Globex Engineering",
    passwordMobile: "13800000000",
  };
  const customer = ok(await call("POST", `${ORDER}/enterprise/user/bind`, bind)).customerId;

  // A business error is HTTP 299 with the envelope's code, not an HTTP error.
  const again = await call("POST", `${ORDER}/enterprise/user/bind`, bind);
  assert.deepEqual([again.status, again.envelope.code], [299, "13004"]);

  const [a, b, c] = ok(await call("POST", `${ORDER}/shellnums`, { size: 3 }));
  await batch("CO-1", [newBuy(1, enterprise, customer, a, "CAD"), newBuy(2, enterprise, customer, b, "CAD")]);
  // A mixed batch: a purchase and a revocation in one channel order.
  const revoke = {
    sequence: 2,
    orderType: "delete_asset",
    licenseType: "normal_recover_usbkey",
    enterpriseGlobalId: enterprise,
    customerId: customer,
    assets: [{ assetNos: [b] }],
  };
  const mixed = await batch("CO-2", [newBuy(1, enterprise, customer, c, "VIEWER"), revoke]);
  assert.ok(mixed.every((r) => r.licenseOrderId.startsWith("LO-")));

  const locked = ok(await call("POST", `${ORDER}/asset/lock`, { assetNums: [a, b], operatorIdentity: "ops@example.com" }));
  // 1: disabled; 2: no such lock (b was revoked).
  assert.deepEqual(Object.fromEntries(locked.map((r) => [r.assetNum, r.status])), { [a]: 1, [b]: 2 });

  const user = { userName: "dave", name: "Dave", password: "Initial-Pass-4" };
  const added = ok(await call("POST", `${MEMBER}/enterprise/${enterprise}/member`, { userList: [user] }));
  assert.deepEqual(added.succeeded.map((m) => m.userName.split("@")[0]), ["dave"]);
  assert.ok((await employees(enterprise)).includes("dave"));

  // One added to the demo's enterprise too: the next test must not see it.
  const erin = { userName: "erin", name: "Erin", password: "Initial-Pass-5" };
  ok(await call("POST", `${MEMBER}/enterprise/${await acme()}/member`, { userList: [erin] }));
  assert.ok((await employees(await acme())).includes("erin"));
});

test("each test starts from the seed", async () => {
  const names = await employees(await acme());
  assert.ok(["alice", "bob", "carol"].every((n) => names.includes(n)) && !names.includes("erin"), names.join());
});

test("the clock moves when told", async () => {
  const start = 1_767_225_600_000; // 2026-01-01T00:00:00Z
  await sandbox.setClock(start, true);
  assert.equal((await sandbox.advanceClock({ days: 30 })).now, start + 30 * 86_400_000);
  assert.equal((await sandbox.clock()).now, start + 30 * 86_400_000);
});

test("a fault fires as scripted", async () => {
  const rule = await sandbox.addFault("allocateShellNums", { kind: "code", code: "500" }, { times: 1 });
  const failed = await call("POST", `${ORDER}/shellnums`, { size: 1 });
  assert.deepEqual([failed.status, failed.envelope.code], [299, "500"]);
  assert.equal(ok(await call("POST", `${ORDER}/shellnums`, { size: 1 })).length, 1);
  assert.deepEqual((await sandbox.faults()).map((r) => [r.id, r.hits]), [[rule.id, 1]]);
});

test("the next test has no fault rules and the machine's clock", async () => {
  assert.deepEqual(await sandbox.faults(), []);
  assert.equal((await sandbox.clock()).frozen, false);
});

test("the journal feeds the coverage report", async () => {
  const report = await sandbox.coverage({ format: "json" });
  for (const operation of ["createEnterprise", "batchOrder", "disableLocks", "addMembers"]) {
    assert.ok(report.includes(operation), operation);
  }
});

test("a simulator that cannot start says why", async () => {
  await assert.rejects(startSandbox({ trialMemberLimit: "many" }), (error) => {
    assert.ok(error instanceof SandboxError);
    assert.match(error.message, /--trial-member-limit/);
    return true;
  });
});

test("an admin refusal names its status and field", async () => {
  await assert.rejects(sandbox.setClock(-1), (error) => {
    assert.ok(error instanceof SandboxError);
    assert.equal(error.status, 400);
    assert.equal(error.field, "now");
    assert.match(error.message, /^set clock: HTTP 400: /);
    return true;
  });
  const page = await sandbox.journal({ operation: "batchOrder", limit: 1 });
  assert.ok(Array.isArray(page.entries) && page.entries.length <= 1);
});

/** A server answering every connection with `head`, then (`endless`) chunks without end. */
async function hostile(head, endless) {
  const server = createServer((socket) => {
    socket.on("error", () => {});
    socket.once("data", () => {
      socket.write(head);
      const more = () => {
        while (endless && !socket.destroyed && socket.write(`1000\r\n${"x".repeat(4096)}\r\n`));
      };
      socket.on("drain", more);
      more();
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}

test("an admin reply past its bound is refused however it is framed", async () => {
  const cases = [
    ["HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 99999999\r\n\r\n{", false],
    ["HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n", true],
  ];
  for (const [head, endless] of cases) {
    const server = await hostile(head, endless);
    try {
      // The admin API of a simulator that is not one: only its address is used.
      const url = `http://127.0.0.1:${server.address().port}`;
      const tokens = { appToken: "a", clientToken: "c", userToken: "u", adminToken: null };
      const fake = new Sandbox({ pid: 0 }, url, tokens, { maxReplyBytes: 64 * 1024 });
      await assert.rejects(fake.clock(), (error) => {
        assert.ok(error instanceof SandboxError, String(error));
        assert.match(error.message, /an admin reply (of|over)/);
        return true;
      });
    } finally {
      server.close();
    }
  }
});
