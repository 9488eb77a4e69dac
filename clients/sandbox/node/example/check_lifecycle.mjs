// Runs the example suite and three ways a run can end badly, each `node --test` in a
// child process, and checks by PID that no licensing-sim outlives any of them:
//
// 1. the example suite (story.test.mjs), which must pass and write its coverage report;
// 2. a failing test that never stops its sandbox (lifecycle/fails.mjs), which must fail;
// 3. Ctrl-C: SIGINT sent to the test runner while a test runs (lifecycle/waits.mjs), as a
//    terminal sends it to its foreground group, of which the simulator is not a member;
// 4. the test runner and its test process killed (SIGKILL to the group) while a test
//    runs: no clean-up code runs at all, and the simulator must end by itself, on its
//    standard input's end;
// 5. one shared simulator, started here, and tenants.test.mjs against it
//    (LICENSING_SANDBOX_URL), its tests at the same time, each in tenants of its own: the
//    run must pass and leave no tenant behind and the default tenant's state as it was.
//
// Usage: node check_lifecycle.mjs COVERAGE_FILE, in a project with licensing-sandbox
// installed. Exits non-zero naming the case that failed. POSIX only.

import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { startSandbox } from "licensing-sandbox";
import { setTimeout as sleep } from "node:timers/promises";

const HERE = dirname(fileURLToPath(import.meta.url));
/** Milliseconds any one case may take. */
const CASE_TIMEOUT_MS = 120_000;

/** Whether the process exists and is not a zombie waiting to be reaped. */
function alive(pid) {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return error.code === "EPERM";
  }
  const stat = `/proc/${pid}/stat`;
  if (!existsSync(stat)) return true;
  const text = readFileSync(stat, "utf8");
  return text.slice(text.lastIndexOf(")") + 2).split(" ")[0] !== "Z";
}

async function goneWithin(pid, ms) {
  const deadline = Date.now() + ms;
  while (alive(pid)) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}

async function simulatorPid(pidFile, child) {
  const deadline = Date.now() + CASE_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (existsSync(pidFile) && readFileSync(pidFile, "utf8").trim()) return Number(readFileSync(pidFile, "utf8"));
    if (child.exitCode !== null || child.signalCode !== null) break;
    await sleep(50);
  }
  throw new Error(`the test run (exit ${child.exitCode ?? child.signalCode}) wrote no simulator PID to ${pidFile}`);
}

function exited(child) {
  return new Promise((resolve, reject) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve([child.exitCode, child.signalCode]);
    const timer = setTimeout(() => reject(new Error("the test run did not end in time")), CASE_TIMEOUT_MS);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      resolve([code, signal]);
    });
  });
}

async function runCase(name, file, { env = {}, expect, act, graceMs = 0 }) {
  const dir = mkdtempSync(join(tmpdir(), "licensing-lifecycle-"));
  try {
    const pidFile = join(dir, "sim.pid");
    const args = ["--test", "--test-reporter=spec", file];
    console.log(`$ node ${args.join(" ")}`);
    const child = spawn(process.execPath, args, {
      cwd: HERE,
      env: { ...process.env, ...env, LICENSING_EXAMPLE_PID_FILE: pidFile },
      stdio: "inherit",
      detached: true, // a group of its own, so that the whole run can be killed at once
    });
    if (act) {
      await simulatorPid(pidFile, child);
      await sleep(500);
      act(child);
    }
    const [code, signal] = await exited(child);
    const sim = await simulatorPid(pidFile, child);
    if (!expect(code, signal)) throw new Error(`${name}: the test run ended with ${code ?? signal}`);
    if (!(await goneWithin(sim, graceMs))) {
      process.kill(sim, "SIGKILL");
      throw new Error(`${name}: licensing-sim (pid ${sim}) still running ${graceMs / 1000} s after the run ended`);
    }
    console.log(`ok: ${name}: the run ended with ${code ?? signal}, licensing-sim (pid ${sim}) gone`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const coverage = resolve(process.argv[2] ?? "");
if (!process.argv[2]) throw new Error("usage: node check_lifecycle.mjs COVERAGE_FILE");
rmSync(coverage, { force: true });
await runCase("the example suite", "story.test.mjs", {
  env: { LICENSING_EXAMPLE_COVERAGE: coverage },
  expect: (code) => code === 0,
});
const report = readFileSync(coverage, "utf8");
for (const operation of ["createEnterprise", "batchOrder", "disableLocks", "addMembers"]) {
  if (!report.includes(`\`${operation}\``)) throw new Error(`the coverage report ${coverage} does not name ${operation}`);
}
console.log(`ok: the coverage report ${coverage} (${report.length} bytes)`);
await runCase("a failing test", "lifecycle/fails.mjs", { expect: (code) => code === 1, graceMs: 10_000 });
await runCase("Ctrl-C (SIGINT to the test runner)", "lifecycle/waits.mjs", {
  expect: (code, signal) => code !== 0 || signal !== null,
  act: (child) => child.kill("SIGINT"),
  graceMs: 10_000,
});
await runCase("the run killed (SIGKILL to its group)", "lifecycle/waits.mjs", {
  expect: (code, signal) => signal === "SIGKILL",
  act: (child) => process.kill(-child.pid, "SIGKILL"),
  graceMs: 10_000,
});
{
  const name = "tenants of one shared simulator";
  const shared = await startSandbox({ seed: "demo" });
  try {
    const before = JSON.stringify(await shared.state());
    const args = ["--test", "--test-reporter=spec", "tenants.test.mjs"];
    console.log(`$ node ${args.join(" ")}`);
    const child = spawn(process.execPath, args, {
      cwd: HERE,
      env: { ...process.env, LICENSING_SANDBOX_URL: shared.url, LICENSING_SANDBOX_TOKEN: shared.tokens.admin },
      stdio: "inherit",
    });
    const [code, signal] = await exited(child);
    if (code !== 0) throw new Error(`${name}: the test run ended with ${code ?? signal}`);
    const { tenants } = await shared.tenants();
    if (tenants.length !== 0) throw new Error(`${name}: ${tenants.length} tenants left after the run`);
    if (JSON.stringify(await shared.state()) !== before) throw new Error(`${name}: the default tenant's state changed`);
    console.log(`ok: ${name}: the run passed, no tenant left, the default tenant as it was`);
  } finally {
    await shared.stop();
  }
}
console.log("5 passed, 0 failed");
