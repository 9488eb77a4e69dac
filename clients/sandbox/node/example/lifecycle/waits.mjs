// A test that waits to be interrupted or killed (run by check_lifecycle.mjs), at most a
// minute.
import { writeFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { test } from "node:test";

import { startSandbox } from "licensing-sandbox";

test("waits for a signal", async () => {
  const sandbox = await startSandbox({ seed: "demo" });
  writeFileSync(process.env.LICENSING_EXAMPLE_PID_FILE, String(sandbox.pid));
  await sleep(60_000);
  await sandbox.stop();
  throw new Error("no signal came within a minute");
});
