// The licensing-client npm package in a partner's project: its clients against a
// simulator from licensing-sandbox, and the documents it carries. `cargo xtask dist
// --check` runs it with `node --test` in a fresh npm project holding only target/dist's
// tarballs.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { after, before, test } from "node:test";

import { BusinessError, memberClient, orderClient, outcome, sandboxClient, unwrap } from "licensing-client";
import { startSandbox } from "licensing-sandbox";

let sandbox;
before(async () => {
  sandbox = await startSandbox({ seed: "demo" });
});
after(() => sandbox.stop());

test("the order service through the generated client", async () => {
  const order = orderClient(sandbox.url, sandbox.tokens.app);
  const numbers = await unwrap(order.POST("/order/api/order/v1/shellnums", { body: { size: 2 } }));
  assert.equal(numbers.length, 2);
  const query = { channelCode: "CH01", channelCustomerId: "CC-ACME", defaultCustomer: "N" };
  const customers = await unwrap(order.GET("/order/api/order/v1/enterprise/user/query", { params: { query } }));
  const bind = {
    channelCode: "CH01",
    channelCustomerId: "CC-ACME",
    customerName: "Acme Robotics",
    branchName: "North",
    enterpriseName: "Acme Robotics",
    passwordMobile: "13800000000",
  };
  // CC-ACME is bound already: a business exception, HTTP 299, read as an error.
  const refused = await outcome(order.POST("/order/api/order/v1/enterprise/user/bind", { body: bind }));
  assert.equal(refused.ok, false);
  assert.ok(refused.error instanceof BusinessError);
  assert.equal(refused.error.code, "13004");

  const member = memberClient(sandbox.url, sandbox.tokens.client, sandbox.tokens.user);
  const eg = customers[0].enterpriseGlobalId;
  const page = await unwrap(
    member.GET("/me/api/v1/enterprise/{enterpriseGlobalId}/members", {
      params: { path: { enterpriseGlobalId: eg }, query: { pageNum: 1, pageSize: 10 } },
    }),
  );
  assert.ok(page.list.some((m) => m.userName.startsWith("alice")));
});

test("the sandbox admin API through the generated client", async () => {
  const admin = sandboxClient(sandbox.url, sandbox.tokens.admin);
  const { data, response } = await admin.GET("/__sandbox/v1/clock");
  assert.equal(response.status, 200);
  assert.equal(typeof data.now, "number");
});

test("the documents and schemas it was generated from", () => {
  const require = createRequire(import.meta.url);
  const spec = readFileSync(require.resolve("licensing-client/openapi/order.yaml"), "utf8");
  assert.match(spec, /operationId: batchOrder/);
  const schema = JSON.parse(readFileSync(require.resolve("licensing-client/schemas/order/NewBuyOrder.json"), "utf8"));
  assert.equal(schema.$schema, "https://json-schema.org/draft/2020-12/schema");
});
