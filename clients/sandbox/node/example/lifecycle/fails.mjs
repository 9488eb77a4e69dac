// A test that fails on purpose (run by check_lifecycle.mjs).
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { test } from "node:test";

import { startSandbox } from "licensing-sandbox";

test("fails on purpose", async () => {
  const sandbox = await startSandbox({ seed: "demo" });
  writeFileSync(process.env.LICENSING_EXAMPLE_PID_FILE, String(sandbox.pid));
  assert.deepEqual(await sandbox.faults(), ["a rule no one added"]);
  await sandbox.stop();
});
