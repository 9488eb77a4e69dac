// A partner's first suite on the licensing-sandbox npm package: the services called through
// the generated client of licensing-client (openapi-fetch on the specs' types, with the
// helper that adds the g_nonce, the credentials and the order service's Content-Type, and
// reads HTTP 299 as a BusinessError), the simulator from `startSandbox`, restored before
// each test. `cargo xtask dist --check` runs it in a fresh npm project, with no Rust
// toolchain on PATH, as
//
//   node --test story.test.mjs        (LICENSING_EXAMPLE_COVERAGE=coverage.md)
//
// Each test starts from the demo seed (Acme Robotics: alice, bob, carol) whatever the
// tests before it did.

import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { after, before, beforeEach, test } from "node:test";

import { BusinessError, memberClient, orderClient, outcome, unwrap } from "licensing-client";
import { Sandbox, SandboxError, startSandbox } from "licensing-sandbox";

import { BIND_GLOBEX, newBuy } from "./orders.mjs";

const ORDER = "/order/api/order/v1";
const MEMBER = "/me/api/v1";
// Every call of the services' clients: a hung simulator fails the test instead of stalling it.
const TIMEOUT_MS = 30_000;

let sandbox;
let order;
let member;
before(async () => {
  sandbox = await startSandbox({ seed: "demo", journalCapacity: 100000 });
  // For check_lifecycle.mjs: the simulator's PID, to see that it is gone afterwards.
  if (process.env.LICENSING_EXAMPLE_PID_FILE) writeFileSync(process.env.LICENSING_EXAMPLE_PID_FILE, String(sandbox.pid));
  const fetchWithTimeout = (request, init) => fetch(request, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
  order = orderClient(sandbox.url, sandbox.tokens.app, { fetch: fetchWithTimeout });
  member = memberClient(sandbox.url, sandbox.tokens.client, sandbox.tokens.user, { fetch: fetchWithTimeout });
});
beforeEach(() => sandbox.restore());
after(async () => {
  if (process.env.LICENSING_EXAMPLE_COVERAGE) await sandbox.coverage({ path: process.env.LICENSING_EXAMPLE_COVERAGE });
  await sandbox.stop();
});

/** The business error a call must end with, as the helper reads it (HTTP 299). */
async function refused(call, code) {
  const result = await outcome(call);
  assert.equal(result.ok, false, `expected business error ${code}, got success`);
  assert.ok(result.error instanceof BusinessError);
  assert.equal(result.error.code, code, result.error.message);
  return result.error;
}

async function batch(channelOrderId, orders) {
  const body = { channelCode: "CH01", channelOrderId, syncMode: "sync", orderList: orders };
  const results = await unwrap(
    order.POST(`${ORDER}/licenseOrder/batchOrder`, { params: { query: { appKey: "example" } }, body }),
  );
  assert.deepEqual(results.map((r) => r.sequence).sort(), orders.map((o) => o.sequence));
  return results;
}

/** Adds one employee; the names of those added. */
async function addMember(enterprise, user) {
  const added = await unwrap(
    member.POST(`${MEMBER}/enterprise/{enterpriseGlobalId}/member`, {
      params: { path: { enterpriseGlobalId: enterprise } },
      body: { userList: [user] },
    }),
  );
  return added.succeeded.map((m) => m.userName.split("@")[0]);
}

async function employees(enterprise) {
  const page = await unwrap(
    member.GET(`${MEMBER}/enterprise/{enterpriseGlobalId}/members`, {
      params: { path: { enterpriseGlobalId: enterprise }, query: { pageNum: 1, pageSize: 100 } },
    }),
  );
  return page.list.map((m) => m.userName.split("@")[0]).sort();
}

/** The enterprises a channel customer of CH01 is bound to; none when it is unknown, which
 * the order service may answer with a business error of no data. */
async function customersOf(channelCustomerId) {
  const query = { channelCode: "CH01", channelCustomerId, defaultCustomer: "N" };
  const result = await outcome(order.GET(`${ORDER}/enterprise/user/query`, { params: { query } }));
  if (!result.ok) {
    assert.deepEqual(result.error.reply.data ?? [], [], result.error.message);
    return [];
  }
  return (result.data ?? []).map((c) => c.enterpriseGlobalId);
}

async function acme() {
  return (await customersOf("CC-ACME"))[0];
}

test("a partner's story", async () => {
  const created = await unwrap(
    order.POST(`${ORDER}/enterprise/user/create`, {
      body: { crmCustomerId: "CRM-GLOBEX", customerName: "Globex Engineering", branchName: "South" },
    }),
  );
  const enterprise = created.enterpriseGlobalId;
  const bind = BIND_GLOBEX;
  const customer = (await unwrap(order.POST(`${ORDER}/enterprise/user/bind`, { body: bind }))).customerId;

  // A business error (HTTP 299) read by the helper as such, with its code, message and cause.
  const again = await refused(order.POST(`${ORDER}/enterprise/user/bind`, { body: bind }), "13004");
  assert.ok(again.reply.message && again.cause?.includes("already bound"), again.message);

  const [a, b, c] = await unwrap(order.POST(`${ORDER}/shellnums`, { body: { size: 3 } }));
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

  const lock = { assetNums: [a, b], operatorIdentity: "ops@example.com" };
  const locked = await unwrap(order.POST(`${ORDER}/asset/lock`, { body: lock }));
  // 1: disabled; 2: no such lock (b was revoked).
  assert.deepEqual(Object.fromEntries(locked.map((r) => [r.assetNum, r.status])), { [a]: 1, [b]: 2 });

  assert.deepEqual(await addMember(enterprise, { userName: "dave", name: "Dave", password: "Initial-Pass-4" }), ["dave"]);
  assert.ok((await employees(enterprise)).includes("dave"));

  // One added to the demo's enterprise too: the next test must not see it.
  await addMember(await acme(), { userName: "erin", name: "Erin", password: "Initial-Pass-5" });
  assert.ok((await employees(await acme())).includes("erin"));
});

test("each test starts from the seed", async () => {
  const names = await employees(await acme());
  assert.ok(["alice", "bob", "carol"].every((n) => names.includes(n)) && !names.includes("erin"), names.join());
  assert.deepEqual(await customersOf("CC-GLOBEX"), []);
});

test("the clock moves when told", async () => {
  const start = 1_767_225_600_000; // 2026-01-01T00:00:00Z
  await sandbox.setClock(start, true);
  assert.equal((await sandbox.advanceClock({ days: 30 })).now, start + 30 * 86_400_000);
  assert.equal((await sandbox.clock()).now, start + 30 * 86_400_000);
});

test("a fault fires as scripted", async () => {
  const rule = await sandbox.addFault("allocateShellNums", { kind: "code", code: "500" }, { times: 1 });
  const failed = await refused(order.POST(`${ORDER}/shellnums`, { body: { size: 1 } }), "500");
  assert.equal(failed.status, 299);
  assert.equal((await unwrap(order.POST(`${ORDER}/shellnums`, { body: { size: 1 } }))).length, 1);
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
