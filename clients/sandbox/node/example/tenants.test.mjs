// Tenants: one sandbox shared by tests that run at the same time, each test in a sandbox of
// its own. Every test below runs concurrently with the others ({ concurrency: true })
// against one simulator — started here, or the shared one of LICENSING_SANDBOX_URL (with
// LICENSING_SANDBOX_TOKEN) — and creates the same enterprise, channel customer and
// channelOrderId in its tenant as the others: it must see only its own; a reset, a clock
// jump or a fault rule of one tenant must not reach another; a tenant's token is refused
// under another's prefix; a deleted tenant answers 404.
//
//   node --test tenants.test.mjs

import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { after, before, describe, test } from "node:test";

import { BusinessError, orderClient, outcome, unwrap } from "licensing-client";
import { SandboxError, connectSandbox, startSandbox } from "licensing-sandbox";

import { BIND_GLOBEX, newBuy } from "./orders.mjs";

const ORDER = "/order/api/order/v1";
const TIMEOUT_MS = 30_000;
const START = 1_767_225_600_000; // 2026-01-01T00:00:00Z
const DAY_MS = 86_400_000;
const RUNS = 8;

let sandbox;
before(async () => {
  const shared = process.env.LICENSING_SANDBOX_URL;
  sandbox = shared
    ? await connectSandbox(shared, { adminToken: process.env.LICENSING_SANDBOX_TOKEN || null })
    : await startSandbox();
  // For check_lifecycle.mjs: the simulator's PID, to see that it is gone afterwards.
  if (process.env.LICENSING_EXAMPLE_PID_FILE) writeFileSync(process.env.LICENSING_EXAMPLE_PID_FILE, String(sandbox.pid));
});
after(() => sandbox.stop());

function orders(tenant, appToken = tenant.tokens.app) {
  const fetchWithTimeout = (request, init) => fetch(request, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
  return orderClient(tenant.url, appToken, { fetch: fetchWithTimeout });
}

/** The enterprises a channel customer of CH01 is bound to, each once. */
async function customersOf(order, channelCustomerId) {
  const query = { channelCode: "CH01", channelCustomerId, defaultCustomer: "N" };
  const result = await outcome(order.GET(`${ORDER}/enterprise/user/query`, { params: { query } }));
  if (!result.ok) {
    assert.deepEqual(result.error.reply.data ?? [], [], result.error.message);
    return [];
  }
  return [...new Set((result.data ?? []).map((c) => c.enterpriseGlobalId))];
}

/** Globex created, bound to CH01 as CC-GLOBEX, one asset bought on CO-1: the same names in
 * every tenant. Its enterprise id. */
async function globex(order) {
  const body = { crmCustomerId: "CRM-GLOBEX", customerName: "Globex Engineering", branchName: "South" };
  const enterprise = (await unwrap(order.POST(`${ORDER}/enterprise/user/create`, { body }))).enterpriseGlobalId;
  const bind = BIND_GLOBEX;
  const customer = (await unwrap(order.POST(`${ORDER}/enterprise/user/bind`, { body: bind }))).customerId;
  const [number] = await unwrap(order.POST(`${ORDER}/shellnums`, { body: { size: 1 } }));
  const batch = { channelCode: "CH01", channelOrderId: "CO-1", syncMode: "sync", orderList: [newBuy(1, enterprise, customer, number, "CAD")] };
  const results = await unwrap(order.POST(`${ORDER}/licenseOrder/batchOrder`, { params: { query: { appKey: "example" } }, body: batch }));
  assert.equal(results.length, 1);
  return enterprise;
}

async function refused(call, code) {
  const result = await outcome(call);
  assert.equal(result.ok, false, `expected business error ${code}, got success`);
  assert.ok(result.error instanceof BusinessError);
  assert.equal(result.error.code, code, result.error.message);
}

describe("tenants of one sandbox, at the same time", { concurrency: true }, () => {
  for (let run = 0; run < RUNS; run++) {
    test(`run ${run}: tenants with the same names see only their own`, async () => {
      const mine = await sandbox.tenant({ name: `mine ${run}`, seed: "demo", ttl: 600 });
      const other = await sandbox.tenant({ name: `other ${run}`, seed: "demo", ttl: 600 });
      try {
        // The tokens stay out of logs.
        assert.ok(!JSON.stringify(mine).includes(mine.tokens.admin) && JSON.stringify(mine).includes(mine.id));
        const [ours, theirs] = [orders(mine), orders(other)];
        assert.deepEqual(await customersOf(ours, "CC-GLOBEX"), []);
        // In one sandbox the second bind of CC-GLOBEX would be refused as already bound.
        const [a, b] = await Promise.all([globex(ours), globex(theirs)]);
        assert.deepEqual(await customersOf(ours, "CC-GLOBEX"), [a]);
        assert.deepEqual(await customersOf(theirs, "CC-GLOBEX"), [b]);

        // A reset of one leaves the other's state.
        await mine.reset();
        assert.deepEqual(await customersOf(ours, "CC-GLOBEX"), []);
        assert.deepEqual(await customersOf(theirs, "CC-GLOBEX"), [b]);

        // A clock jump in one does not move the other's.
        await mine.setClock(START, true);
        assert.equal((await mine.advanceClock({ days: 30 })).now, START + 30 * DAY_MS);
        const clock = await other.clock();
        assert.equal(clock.frozen, false);
        assert.notEqual(clock.now, START + 30 * DAY_MS);

        // A fault rule of one fires there only, and only its journal shows it.
        await mine.addFault("allocateShellNums", { kind: "code", code: "500" });
        assert.deepEqual(await other.faults(), []);
        await refused(ours.POST(`${ORDER}/shellnums`, { body: { size: 1 } }), "500");
        assert.equal((await unwrap(theirs.POST(`${ORDER}/shellnums`, { body: { size: 1 } }))).length, 1);
        assert.equal((await mine.journal({ operation: "allocateShellNums", code: "500" })).entries.length, 1);
        assert.deepEqual((await other.journal({ operation: "allocateShellNums", code: "500" })).entries, []);

        // A tenant's token under another tenant's prefix is a wrong token.
        await refused(orders(other, mine.tokens.app).POST(`${ORDER}/shellnums`, { body: { size: 1 } }), "13004");
      } finally {
        await mine.delete();
        await other.delete();
      }
      for (const gone of [mine, other]) {
        await assert.rejects(sandbox.getTenant(gone.id), (error) => error instanceof SandboxError && error.status === 404);
        const reply = await fetch(`${gone.url}${ORDER}/shellnums`, { method: "POST", body: "{}", signal: AbortSignal.timeout(TIMEOUT_MS) });
        assert.equal(reply.status, 404);
      }
      // Safe to call twice.
      await mine.delete();
    });
  }
});

test("no tenant is left once every test has deleted its own", async () => {
  const { tenants } = await sandbox.tenants();
  assert.ok(tenants.every((t) => !/^(mine|other) \d+$/.test(t.name ?? "")), JSON.stringify(tenants.map((t) => t.name)));
});

test("connecting where no sandbox answers names the address", async () => {
  const server = createServer((_, reply) => reply.writeHead(503).end());
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  try {
    await assert.rejects(connectSandbox(url, { adminToken: "token" }), (error) => {
      assert.ok(error instanceof SandboxError && error.message.startsWith(`no sandbox answers at ${url}`), error.message);
      assert.match(error.message, /HTTP 503/);
      return true;
    });
  } finally {
    server.close();
  }
});
