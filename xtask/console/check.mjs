// Drives the simulator's sandbox console in headless Chromium against a running
// licensing-sim (`cargo xtask console` starts it and writes what this needs):
//
// 1. a request made by the SDK (the `licensing` command line) appears in the open journal
//    page within one second, without a reload;
// 2. its "Copy as cURL" command, taken from the clipboard and run in a shell with the
//    SDK's environment variables, gets the same HTTP status and business code;
// 3. a fault rule added through the form (found by its labels) makes the next SDK call
//    fail with the scripted code, and only the next one;
// 4. Reset asks first: declined, the state is kept; accepted, it is emptied;
// 5. every control is labelled and reachable by keyboard, the page logs no error, and no
//    request leaves the simulator's origin;
// 6. a conformance proxy in front of the simulator (`licensing-proxy`) shows, on its
//    own console page, the deviation a patch fault made of an SDK call through it: its
//    operation, pointer, rule and exact request and reply, credentials redacted; again
//    with no error and no request leaving the proxy's origin;
// 7. the Coverage pages: the simulator's, over its live journal (the calls above, the
//    scripted 13004, a lock disabled twice named by both journal entries, each operation
//    linked to its journal); the proxy's, which says how to start a recording, then
//    reports on one made through it (the same double, by the recording's indexes);
// 8. axe-core finds no violation on any page of either console;
// 9. after a bulk run of 40 batches (`licensing orders submit`, 2,000 orders) the journal
//    page is at most 1 MB and loads within 10× the same page narrowed to one operation,
//    loaded in turn with it (its rows carry summaries; an
//    entry's request and reply are fetched when it is opened), and the state page shows
//    its 2,000 assets a page at a time;
// 10. the tenants (tenants.mjs, against a second simulator, started with an admin token):
//    the simulator's admin lists them and opens one's console, which shows that tenant
//    alone; a tenant's admin token opens its own pages and none of another's nor the
//    list, by URL, by a copied session cookie or by the other's sign-in form.
//
// Saves screenshots of the journal and of the Coverage page. Usage: node check.mjs
// CONFIG.json (CONFIG: {browser, url, proxyUrl, cli, configDir, screenshot,
// coverageScreenshot, tenantsUrl, tenantsAdminToken})
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { chromium } from "playwright-core";

import { checker, sdkEnvironment, unlabelledControls } from "./shared.mjs";
import { checkTenants } from "./tenants.mjs";

const config = JSON.parse(readFileSync(process.argv[2], "utf8"));
const origin = new URL(config.url).origin;
const { problems, check } = checker();
const sdkEnv = sdkEnvironment(config.url, config.configDir);

/** One SDK call through the command line: its exit status and output. */
function sdk(...args) {
  return sdkAt(sdkEnv, ...args);
}

function sdkAt(env, ...args) {
  try {
    const out = execFileSync(config.cli, args, { env, encoding: "utf8", stdio: "pipe" });
    return { ok: true, out };
  } catch (error) {
    return { ok: false, out: `${error.stdout}${error.stderr}` };
  }
}

/** A lock disabled, by the command line (through `env`'s base URLs). */
const lockBody = join(mkdtempSync(join(tmpdir(), "console-check-")), "lock.json");
writeFileSync(lockBody, JSON.stringify({ assetNums: ["8000000001"], operatorIdentity: "ops@example.com" }));
function disableLock(env) {
  return sdkAt(env, "order", "disable-locks", "--json-body", lockBody);
}

/** A new page of `context`, watched: the console errors it logs (with `refusals`, not the
 * failed loads of a 401 or 404 that a check asks for on purpose) and the requests that
 * would leave `origin`, aborted. */
async function watched(context, origin, { refusals = false } = {}) {
  const errors = [];
  const foreign = [];
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (new URL(url).origin !== origin) {
      foreign.push(url);
      return route.abort();
    }
    return route.continue();
  });
  const page = await context.newPage();
  page.on("console", (message) => {
    const refusal = refusals && /status of 40[14]/.test(message.text());
    if (message.type() === "error" && !refusal) errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(error.message));
  return { page, errors, foreign };
}

/** axe-core's violations on the page open in `page` (its context bypasses the CSP, which
 * would refuse the injected script; the pages' own checks run under it elsewhere). */
const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
async function axeViolations(page) {
  await page.evaluate(axeSource);
  const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ["violations"] }));
  return result.violations.map((v) => `${v.id} (${v.nodes.length}: ${v.nodes[0]?.target.join(" ")})`);
}

/** A `new_buy` order of the demo seed's customer for one asset number (as the command
 * line's own bulk tests write them: test-support/src/orders.rs). */
function newBuy(number) {
  return {
    orderType: "new_buy", sequence: 1, customerId: "C100002", enterpriseGlobalId: "EG-000001",
    licenseType: "normal_recover_usbkey", crmCustomerId: "CRM-ACME", customerName: "Acme Robotics",
    channelCustomerId: "CC-ACME", customerType: "company", adminName: "Ada", adminAccount: "ada",
    adminEmail: "ada@example.com", adminCellNumber: "13800000000", passwordMobile: "13800000000",
    address: "1 Main Street", branchCode: "BR01", branchName: "North",
    assets: [{ assetNos: [number], products: [{
      crmProductId: "P-CAD", parentCrmProductId: "A-1", productUri: "cad", productName: "CAD Suite",
      productType: "software", limitConcurrent: 5, limitTimeDuration: 0, trial: 0, trialEndDate: 0,
      timeUnit: "year", timeUnitQuantity: 1, timeDurationExpression: "1-0-0", productFeatures: [],
    }] }],
  };
}

async function adminState() {
  const response = await fetch(`${config.url}/__sandbox/v1/state`);
  return (await response.json()).state;
}

const browser = await chromium.launch({
  executablePath: config.browser,
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});
try {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin });
  const { page, errors, foreign } = await watched(context, origin);

  // 1. The journal, live.
  await page.goto(`${config.url}/__sandbox/`);
  const rows = page.locator("#journal > li.entry");
  const before = await rows.count();
  const call = sdk("order", "allocate-shell-nums", "--size", "2");
  check(call.ok, `the SDK call succeeds (${call.out.trim().split("\n")[0]})`);
  const started = Date.now();
  const newest = page.locator('#journal > li.entry[data-operation="allocateShellNums"]').first();
  let appeared = true;
  try {
    await newest.waitFor({ timeout: 1000 });
  } catch {
    appeared = false;
  }
  const waited = Date.now() - started;
  check(appeared && waited <= 1000, `the call appears in the journal without a reload in ${waited} ms (at most 1000)`);
  check((await rows.count()) === before + 1, "one new entry, at the top");

  // 2. Copy as cURL, run in a shell.
  await newest.locator("summary").focus();
  await page.keyboard.press("Enter"); // opens by keyboard
  const copy = newest.getByRole("button", { name: "Copy as cURL" });
  await copy.focus();
  await page.keyboard.press("Enter");
  const command = await page.evaluate(() => navigator.clipboard.readText());
  check(command.startsWith("curl ") && command.includes("$LICENSING_APP_TOKEN"), "the clipboard holds the command, the token as a variable");
  check(!command.includes("sim-app-token"), "no credential in the command");
  const replayed = execFileSync("bash", ["-c", command], { env: sdkEnv, encoding: "utf8" });
  const status = Number(/HTTP (\d+)\s*$/.exec(replayed)?.[1]);
  const reply = JSON.parse(replayed.slice(0, replayed.lastIndexOf("HTTP ")));
  const shownStatus = Number(await newest.getAttribute("data-status"));
  const shownCode = await newest.getAttribute("data-code");
  check(status === shownStatus && String(reply.code) === shownCode,
    `the command's reply: HTTP ${status} code ${reply.code}, as journalled: HTTP ${shownStatus} code ${shownCode}`);
  const again = execFileSync("bash", ["-c", command], { env: sdkEnv, encoding: "utf8" });
  check(/HTTP 200\s*$/.test(again) && JSON.parse(again.slice(0, again.lastIndexOf("HTTP "))).code === 0,
    "run twice, it is not refused as a replay (a fresh g_nonce each time)");
  await page.waitForTimeout(700); // the two replays arrive too
  await page.screenshot({ path: config.screenshot, fullPage: false });
  console.log(`screenshot: ${config.screenshot}`);

  // 3. A fault rule through the form.
  await page.getByRole("link", { name: "Faults & clock" }).click();
  await page.getByLabel("operation (required)").fill("allocateShellNums");
  await page.getByLabel("times").fill("1");
  await page.getByLabel("kind (required)").selectOption("code");
  await page.getByLabel("code", { exact: true }).fill("13004");
  await page.getByRole("button", { name: "Add rule" }).click();
  await page.locator('tr[data-rule]').first().waitFor();
  check((await page.locator("tr[data-rule]").count()) === 1, "the rule is listed");
  const failed = sdk("order", "allocate-shell-nums", "--size", "1");
  check(!failed.ok && failed.out.includes("13004"), `the next SDK call fails with the scripted 13004 (${failed.out.trim().split("\n")[0]})`);
  const after = sdk("order", "allocate-shell-nums", "--size", "1");
  check(after.ok, "the call after it succeeds (times: 1)");
  await page.reload();
  check((await page.locator("tr[data-rule] td").nth(5).textContent()).trim() === "1", "the rule fired once");

  // 7a. The simulator's Coverage page, over the journal so far.
  const twice = [disableLock(sdkEnv), disableLock(sdkEnv)];
  check(twice.every((r) => r.ok), `a lock disabled twice through the SDK (${twice.map((r) => r.out.trim().split("\n")[0]).join(" / ")})`);
  await page.getByRole("link", { name: "Coverage" }).click();
  check((await page.locator("h1").textContent()) === "Coverage", "the Coverage page opens from the navigation");
  const allocate = page.locator('#coverage-operations tr[data-operation="allocateShellNums"]');
  const calls = Number(await allocate.getAttribute("data-calls"));
  check(calls >= 4, `allocateShellNums: ${calls} calls counted (at least the 4 made above)`);
  check((await allocate.locator("td").nth(2).textContent()).includes("13004×1"), "the scripted 13004 is among its answered codes, once");
  const called = await page.locator('#coverage-totals tr[data-total="Operations called"] td').first().textContent();
  check(Number(called) >= 2, `operations called: ${called}`);
  const simDouble = page.locator('#coverage-doubles li[data-operation="disableLocks"]');
  const simDoubleText = (await simDouble.textContent()).replace(/\s+/g, " ");
  check(/disable of lock 8000000001, applied by journal#seq \d+ and again by journal#seq \d+/.test(simDoubleText), `the double names both journal entries: ${simDoubleText.trim()}`);
  await page.setViewportSize({ width: 1400, height: 1100 });
  await page.screenshot({ path: config.coverageScreenshot, fullPage: false });
  await page.setViewportSize({ width: 1400, height: 900 });
  console.log(`screenshot: ${config.coverageScreenshot}`);
  await allocate.getByRole("link").click();
  check(new URL(page.url()).searchParams.get("operation") === "allocateShellNums", "an operation links to its journal entries");
  check((await page.locator('#journal > li.entry:not([data-operation="allocateShellNums"])').count()) === 0, "which list only that operation");

  // 9. A bulk run of 40 batches, then the journal and the state.
  const numbers = [];
  for (const half of [1, 2]) {
    // At most 1,000 a call (the simulator's bound; the documents show none).
    const allocated = sdk("order", "allocate-shell-nums", "--size", "1000", "--output", "json");
    check(allocated.ok, `1,000 asset numbers allocated (${half}/2)`);
    if (allocated.ok) numbers.push(...JSON.parse(allocated.out));
  }
  check(numbers.length === 2000, `2,000 asset numbers allocated (${numbers.length})`);
  const ordersFile = join(mkdtempSync(join(tmpdir(), "console-bulk-")), "orders.jsonl");
  writeFileSync(ordersFile, numbers.map((n) => JSON.stringify(newBuy(n))).join("\n") + "\n");
  const bulk = sdk("orders", "submit", ordersFile, "--batch-size", "50", "--channel-code", "CH01", "--app-key", "APP-KEY");
  check(bulk.ok, `40 batches of 50 orders submitted (${bulk.out.trim().split("\n").slice(-1)[0]})`);
  // A page's load is judged against a yardstick loaded beside it, on the same server in
  // the same seconds: a fixed time would judge the machine's load rather than the page.
  // The yardstick is the same page narrowed to one entry; each is loaded three times in
  // turn and the medians compared.
  const loadTimes = async (url) => {
    const response = await page.goto(url);
    const bytes = (await response.body()).length;
    const ms = await page.evaluate(() => {
      const [navigation] = performance.getEntriesByType("navigation");
      return navigation.loadEventEnd - navigation.startTime;
    });
    return { bytes, ms };
  };
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const againstYardstick = async (url, yardstickUrl) => {
    const full = [];
    const small = [];
    let bytes = 0;
    for (let round = 0; round < 3; round++) {
      const one = await loadTimes(url);
      bytes = one.bytes;
      full.push(one.ms);
      small.push((await loadTimes(yardstickUrl)).ms);
    }
    return { bytes, ms: median(full), ratio: median(full) / Math.max(median(small), 1) };
  };
  const journalLoad = await againstYardstick(`${config.url}/__sandbox/`, `${config.url}/__sandbox/?operation=allocateShellNums`);
  const journalBytes = journalLoad.bytes;
  await page.goto(`${config.url}/__sandbox/`);
  const batches = await page.locator('#journal > li.entry[data-operation="batchOrder"]').count();
  check(batches === 40, `the journal shows the 40 batches (${batches})`);
  check(journalBytes <= 1024 * 1024, `the journal page is ${(journalBytes / 1024).toFixed(0)} KiB (at most 1 MiB)`);
  check(journalLoad.ratio <= 10, `and loads in ${journalLoad.ms.toFixed(0)} ms, ${journalLoad.ratio.toFixed(2)}× the same page narrowed to one operation (at most 10×)`);
  const batchEntry = page.locator('#journal > li.entry[data-operation="batchOrder"]').first();
  await batchEntry.locator("summary").click();
  await batchEntry.locator("pre.json").first().waitFor();
  check((await batchEntry.locator("pre.json").first().textContent()).includes('"orderType": "new_buy"'), "an opened batch shows its request, fetched when opened");
  // The state page's yardstick is the journal narrowed to one operation, a page of the
  // same frame and a handful of rows.
  const stateLoad = await againstYardstick(`${config.url}/__sandbox/state`, `${config.url}/__sandbox/?operation=allocateShellNums`);
  await page.goto(`${config.url}/__sandbox/state`);
  check(stateLoad.ratio <= 10, `the state page with 2,000 more assets: ${(stateLoad.bytes / 1024).toFixed(0)} KiB, loaded in ${stateLoad.ms.toFixed(0)} ms, ${stateLoad.ratio.toFixed(2)}× a one-operation journal page (at most 10×)`);
  const assetPages = page.getByRole("navigation", { name: "Assets: pages" });
  check((await page.locator("#assets tbody tr").count()) === 200, "the assets table shows its first 200 rows");
  await assetPages.getByRole("link", { name: "Next" }).click();
  await page.waitForURL(/assets-page=2/);
  const second = (await page.getByRole("navigation", { name: "Assets: pages" }).textContent()).replace(/\s+/g, " ");
  check(second.includes("Rows 201–400 of") && (await page.locator("#assets tbody tr").count()) === 200, `its Next link shows the next 200 (${second.trim()})`);

  // 4. Reset asks first.
  await page.getByRole("navigation").getByRole("link", { name: "State", exact: true }).click();
  check(await page.getByRole("cell", { name: "Acme Robotics" }).first().isVisible(), "the state page lists the demo enterprise");
  page.once("dialog", (dialog) => dialog.dismiss());
  await page.getByRole("button", { name: "Reset" }).click();
  await page.getByText("Nothing was changed.").waitFor();
  check(Object.keys((await adminState()).enterprises).length === 1, "declined: the state is kept");
  let asked = "";
  page.once("dialog", (dialog) => {
    asked = dialog.message();
    dialog.accept();
  });
  await Promise.all([page.waitForEvent("load"), page.getByRole("button", { name: "Reset" }).click()]);
  check(asked.startsWith("Reset the simulator?"), `it asked: "${asked}"`);
  check(Object.keys((await adminState()).enterprises).length === 0, "accepted: no enterprise is left");
  check((await page.locator("#enterprises-title").textContent()).includes("(0)"), "the page shows the empty state");

  // 5. Labelled, keyboard-reachable controls on every page; no errors; nothing foreign.
  const axeContext = await browser.newContext({ bypassCSP: true, viewport: { width: 1400, height: 900 } });
  const axePage = await axeContext.newPage();
  for (const path of ["", "state", "faults", "coverage", "conformance", "tenants"]) {
    await axePage.goto(`${config.url}/__sandbox/${path}`);
    const violations = await axeViolations(axePage);
    check(violations.length === 0, `/__sandbox/${path}: axe finds no violation ${violations.join(" | ")}`);
    await page.goto(`${config.url}/__sandbox/${path}`);
    const unlabelled = await page.evaluate(unlabelledControls);
    check(unlabelled.length === 0, `/__sandbox/${path}: every control labelled ${unlabelled.join(" ")}`);
    const unreachable = await page.evaluate(() =>
      [...document.querySelectorAll("a[href], input, select, button, summary")]
        .filter((c) => c.tabIndex < 0 || c.disabled).length,
    );
    check(unreachable === 0, `/__sandbox/${path}: every control reachable by Tab`);
  }
  await page.keyboard.press("Tab");
  check(await page.evaluate(() => document.activeElement?.textContent === "Skip to content"), "the first Tab reaches the skip link");
  check(errors.length === 0, `no console errors ${errors.join(" | ")}`);
  check(foreign.length === 0, `no request left ${origin} ${foreign.join(" ")}`);

  // 6. The proxy's console: the deviation of a call through it.
  const proxyOrigin = new URL(config.proxyUrl).origin;
  const rule = await fetch(`${config.url}/__sandbox/v1/faults`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      operation: "allocateShellNums",
      times: 1,
      fault: { kind: "patch", patch: [{ op: "replace", path: "/code", value: "99999" }] },
    }),
  });
  check(rule.ok, `a patch fault on the simulator (HTTP ${rule.status})`);
  const viaProxy = { ...sdkEnv, LICENSING_ORDER_URL: config.proxyUrl, LICENSING_MEMBER_URL: config.proxyUrl };
  const patched = sdkAt(viaProxy, "order", "allocate-shell-nums", "--size", "1");
  check(!patched.ok && patched.out.includes("99999"), `the SDK call through the proxy gets the patched code (${patched.out.trim().split("\n")[0]})`);
  const proxyContext = await browser.newContext();
  const { page: proxyPage, errors: proxyErrors, foreign: proxyForeign } = await watched(proxyContext, proxyOrigin);
  await proxyPage.goto(`${config.proxyUrl}/__sandbox/`);
  check(new URL(proxyPage.url()).pathname === "/__sandbox/conformance", `the proxy's console opens on its Conformance page (${proxyPage.url()})`);
  const section = proxyPage.getByRole("region", { name: "Deviations of allocateShellNums" });
  check(await section.isVisible(), "the deviation is listed under its operation");
  const item = section.locator("li").first();
  const summary = (await item.locator("summary").textContent()).replace(/\s+/g, " ");
  check(summary.includes("reply /code undocumented-code") && summary.includes('got "99999"'), `with its pointer and rule: ${summary.trim()}`);
  await item.locator("summary").focus();
  await proxyPage.keyboard.press("Enter");
  const pair = await item.locator(".exchange").innerText();
  check(pair.includes(`POST ${proxyOrigin}/order/api/order/v1/`) && pair.includes('"code": "99999"'), "its exact request and reply");
  check(pair.includes("[REDACTED]") && !pair.includes("sim-app-token"), "credentials redacted");
  const sections = await proxyPage.getByRole("navigation").getByRole("link").allTextContents();
  check(sections.join(",") === "Conformance,Coverage", `the proxy offers its two pages (${sections.join(", ")})`);

  // 7b. The proxy's Coverage page: how to start a recording, then one made through it.
  await proxyPage.getByRole("link", { name: "Coverage" }).click();
  const howTo = await proxyPage.locator("main").innerText();
  check(howTo.includes("not recording") && howTo.includes(`curl -X POST ${proxyOrigin}/__sandbox/v1/recording`), "with nothing recorded it says how to start a recording");
  const recordingStarted = await fetch(`${config.proxyUrl}/__sandbox/v1/recording`, { method: "POST" });
  check(recordingStarted.ok, `the recording started as the page says (HTTP ${recordingStarted.status})`);
  const viaTwice = [disableLock(viaProxy), disableLock(viaProxy)];
  check(viaTwice.every((r) => r.ok), "a lock disabled twice through the proxy");
  await proxyPage.reload();
  const proxyDouble = (await proxyPage.locator('#coverage-doubles li[data-operation="disableLocks"]').textContent()).replace(/\s+/g, " ");
  check(proxyDouble.includes("disable of lock 8000000001, applied by recording#0 and again by recording#1"), `the proxy names both recorded exchanges: ${proxyDouble.trim()}`);
  check((await proxyPage.locator('#coverage-operations tr[data-operation="disableLocks"]').getAttribute("data-calls")) === "2", "two calls of disableLocks recorded");
  const proxyAxe = await axeContext.newPage();
  for (const path of ["conformance", "coverage"]) {
    await proxyAxe.goto(`${config.proxyUrl}/__sandbox/${path}`);
    const violations = await axeViolations(proxyAxe);
    check(violations.length === 0, `the proxy's /__sandbox/${path}: axe finds no violation ${violations.join(" | ")}`);
  }
  await axeContext.close();
  check(proxyErrors.length === 0, `no console errors on the proxy's page ${proxyErrors.join(" | ")}`);
  check(proxyForeign.length === 0, `no request left ${proxyOrigin} ${proxyForeign.join(" ")}`);
  await proxyContext.close();

  // 10. The tenants.
  await checkTenants({ browser, config, check, sdk: sdkAt, axeViolations, watched });
} finally {
  await browser.close();
}
console.log(problems.length === 0 ? "console: every check passed" : `console: ${problems.length} failed`);
process.exit(problems.length === 0 ? 0 : 1);
