// Drives the simulator's sandbox console in headless Firefox over WebDriver BiDi
// (puppeteer-core, which speaks it to the browser itself: no driver in between) against a
// running licensing-sim started with an admin token (`cargo xtask console --browser
// firefox` starts it and writes what this needs):
//
// 1. the console asks for the admin token; signed in through its form, the session cookie
//    stands for it, and a change sent from the page without the session's anti-forgery
//    header (x-sandbox-csrf) is refused with 403;
// 2. a request made by the SDK (the `licensing` command line) appears in the open journal
//    page within one second, without a reload;
// 3. its "Copy as cURL" command, read back from the clipboard and run in a shell, gets the
//    same HTTP status and business code;
// 4. a fault rule added through the form (found by its labels) is listed and makes the
//    next SDK call fail with the scripted code, and only the next one;
// 5. Reset asks first: declined, the state is kept; accepted, it is emptied;
// 6. every control is labelled, no page logs an error or breaks its Content Security
//    Policy (BiDi's log events, shown to be heard by an error and a blocked request made
//    on purpose), and no request leaves the simulator's origin (every page's performance
//    entries, and every request BiDi's network events report).
//
// Saves a screenshot of the journal. Usage: node check_firefox.mjs CONFIG.json
// (CONFIG: {firefox, url, adminToken, cli, configDir, screenshot})
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

import puppeteer from "puppeteer-core";

import { checker, sdkEnvironment, unlabelledControls } from "./shared.mjs";

const config = JSON.parse(readFileSync(process.argv[2], "utf8"));
const base = config.url;
const origin = new URL(base).origin;
const { problems, check } = checker();
const sdkEnv = sdkEnvironment(base, config.configDir);

/** One SDK call through the command line: whether it succeeded, and its output. */
function sdk(...args) {
  const done = spawnSync(config.cli, args, { env: sdkEnv, encoding: "utf8", timeout: 60_000 });
  return { ok: done.status === 0, out: `${done.stdout}${done.stderr}` };
}

/** The simulator's state, read through the admin API with the admin token. */
async function adminState() {
  const reply = await fetch(`${base}/__sandbox/v1/state`, {
    headers: { authorization: `Bearer ${config.adminToken}` },
    signal: AbortSignal.timeout(10_000),
  });
  return (await reply.json()).state;
}

const firstLine = (text) => text.split(/\s+/).join(" ").trim().slice(0, 100);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const version = createRequire(import.meta.url)("puppeteer-core/package.json").version;

/** A copied command run in a shell with the SDK's variables: its HTTP status and business
 * code, or why there are none. */
function replay(command) {
  if (!command.startsWith("curl ")) return ["(not run: no command)", ""];
  try {
    const out = execFileSync("bash", ["-c", command], { env: sdkEnv, encoding: "utf8", timeout: 30_000 });
    const status = /HTTP (\d+)\s*$/.exec(out)?.[1];
    return [status, String(JSON.parse(out.slice(0, out.lastIndexOf("HTTP "))).code)];
  } catch (error) {
    return [`(failed: ${firstLine(String(error))})`, ""];
  }
}

const browser = await puppeteer.launch({
  browser: "firefox",
  executablePath: config.firefox,
  headless: true,
  defaultViewport: { width: 1400, height: 900 },
  extraPrefsFirefox: {
    // navigator.clipboard.readText() at any time: Firefox otherwise lets a page read
    // what it copied itself only within a keypress's transient activation (5 s), which a
    // busy machine can outlast between the copy and the read.
    "dom.events.testing.asyncClipboard": true,
    "network.proxy.type": 0,
  },
});
const errors = [];
const foreign = [];
const visited = [];
let requestsHeard = 0;
try {
  console.log(`browser: ${await browser.version()} (puppeteer-core ${version}, WebDriver BiDi)`);
  const page = await browser.newPage();
  // BiDi's log.entryAdded, heard from before the first page loads: every uncaught error
  // and every load the Content Security Policy blocked (Firefox reports those as script
  // errors: "pageerror"), and every console.error.
  page.on("pageerror", (error) => errors.push(`script error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") {
      errors.push(`console error: ${message.text()} (at ${message.location().url})`);
    }
  });
  // BiDi's network.beforeRequestSent: every request the pages sent, the sign-in page's
  // too (which no leavePage sees).
  page.on("request", (request) => {
    requestsHeard += 1;
    if (new URL(request.url()).origin !== origin) foreign.push(`${request.url()} (a request event)`);
  });

  /** Before a page is left: every origin it asked, by its performance entries. */
  async function leavePage() {
    const url = page.url();
    visited.push(url);
    const requested = await page.evaluate(() =>
      [...performance.getEntriesByType("navigation"), ...performance.getEntriesByType("resource")].map((e) => e.name),
    );
    for (const name of requested) {
      if (new URL(name).origin !== origin) foreign.push(`${name} (from ${url})`);
    }
  }
  async function go(path) {
    if (page.url().startsWith(origin)) await leavePage();
    await page.goto(`${base}/__sandbox/${path}`);
  }
  /** The first element of `selector` (under `root`) whose text, spaces collapsed, is `text`. */
  async function byText(selector, text, root = page) {
    for (const element of await root.$$(selector)) {
      const shown = await element.evaluate((e) => e.textContent.replace(/\s+/g, " ").trim());
      if (shown === text) return element;
    }
    throw new Error(`no ${selector} reads ${JSON.stringify(text)}`);
  }
  /** The control whose <label> reads exactly `text`. */
  async function labelled(text) {
    const label = await byText("label", text);
    const control = await page.$(`#${await label.evaluate((l) => l.htmlFor)}`);
    if (!control) throw new Error(`the label ${JSON.stringify(text)} names no control`);
    return control;
  }
  const textOf = (selector) => page.$eval(selector, (e) => e.textContent.trim());
  /** Clicks `element` and answers the confirm it opens; returns the question. */
  async function answer(element, accept) {
    const asked = new Promise((resolve) => {
      page.once("dialog", async (dialog) => {
        const question = dialog.message();
        await (accept ? dialog.accept() : dialog.dismiss());
        resolve(question);
      });
    });
    await element.click();
    return asked;
  }

  // 1. Signing in: a session cookie, and its anti-forgery header on every change.
  await go("");
  check((await page.$("#token")) !== null && (await page.title()).includes("Sign in"),
    "without a session the console asks for the admin token");
  await (await labelled("Admin token")).type(config.adminToken);
  await page.keyboard.press("Enter");
  await page.waitForSelector("#journal", { timeout: 5000 });
  const cookie = (await page.cookies()).find((c) => c.name === "licensing_sim_session") ?? {};
  const shownCookie = JSON.stringify({ httpOnly: cookie.httpOnly, sameSite: cookie.sameSite, path: cookie.path });
  check(cookie.httpOnly === true && cookie.sameSite === "Strict" && cookie.path === "/__sandbox",
    `signed in: the session cookie is HttpOnly, SameSite=Strict, Path=/__sandbox (${shownCookie})`);
  check(!(await page.content()).includes(config.adminToken), "the admin token is not in the page");
  const refused = await page.evaluate(() => {
    const post = (headers) => fetch("/__sandbox/v1/clock/advance", {
      method: "POST", credentials: "same-origin",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify({ ms: 0 }),
    }).then(async (r) => [r.status, (await r.json()).message]);
    const csrf = document.querySelector('meta[name="sandbox-csrf"]').content;
    return Promise.all([post({}), post({ "x-sandbox-csrf": csrf })]);
  });
  check(refused[0][0] === 403 && String(refused[0][1]).includes("x-sandbox-csrf"),
    `a change with the session but without x-sandbox-csrf: HTTP ${refused[0][0]} (${refused[0][1]})`);
  check(refused[1][0] === 200, `the same change with the header: HTTP ${refused[1][0]}`);

  // 2. The journal, live.
  const rows = "#journal > li.entry";
  const before = (await page.$$(rows)).length;
  const call = sdk("order", "allocate-shell-nums", "--size", "2");
  check(call.ok, `the SDK call succeeds (${firstLine(call.out)})`);
  const started = performance.now();
  const newestCss = '#journal > li.entry[data-operation="allocateShellNums"]';
  let waited = null;
  try {
    await page.waitForSelector(newestCss, { timeout: 1000 });
    waited = Math.round(performance.now() - started);
  } catch {
    // Not there within the second: reported below.
  }
  check(waited !== null && waited <= 1000,
    `the call appears in the journal without a reload ${waited === null ? "not within a second" : `in ${waited} ms`} (at most 1000)`);
  check((await page.$$(rows)).length === before + 1, "one new entry, at the top");

  // 3. Copy as cURL, read back from the clipboard and run in a shell.
  const newest = await page.waitForSelector(newestCss);
  await (await newest.$("summary")).focus();
  await page.keyboard.press("Enter"); // opens by keyboard
  // The entry's request, reply and command arrive when it is opened.
  await newest.waitForSelector("button::-p-text(Copy as cURL)", { timeout: 5000 });
  await (await byText("button", "Copy as cURL", newest)).focus();
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => document.getElementById("status").textContent.trim() !== "", { timeout: 5000 });
  const said = await textOf("#status");
  check(said === "The command was copied.", `the page says: ${JSON.stringify(said)}`);
  const command = await page.evaluate(() =>
    navigator.clipboard.readText().then((text) => text, (e) => `unreadable: ${e}`),
  );
  const copied = command.startsWith("curl ") && command.includes("$LICENSING_APP_TOKEN");
  check(copied, `the clipboard holds the command, the token as a variable${copied ? "" : ` (${firstLine(command)})`}`);
  check(!command.includes("sim-app-token"), "no credential in the command");
  const [status, code] = replay(command);
  const shown = await newest.evaluate((e) => [e.dataset.status, e.dataset.code]);
  check(status === shown[0] && code === shown[1],
    `the command's reply: HTTP ${status} code ${code}, as journalled: HTTP ${shown[0]} code ${shown[1]}`);
  await sleep(700); // the replay arrives in the journal too
  await page.screenshot({ path: config.screenshot });
  console.log(`screenshot: ${config.screenshot}`);

  // 4. A fault rule through the form.
  await leavePage();
  await (await byText("a", "Faults & clock")).click();
  await page.waitForSelector("#fault-form", { timeout: 5000 });
  await (await labelled("operation (required)")).type("allocateShellNums");
  await (await labelled("times")).type("1");
  await (await labelled("kind (required)")).select("code");
  await (await labelled("code")).type("13004");
  await (await byText("button", "Add rule")).click();
  await page.waitForSelector("tr[data-rule]", { timeout: 5000 });
  check((await page.$$("tr[data-rule]")).length === 1, "the rule is listed");
  const failed = sdk("order", "allocate-shell-nums", "--size", "1");
  check(!failed.ok && failed.out.includes("13004"), `the next SDK call fails with the scripted 13004 (${firstLine(failed.out)})`);
  check(sdk("order", "allocate-shell-nums", "--size", "1").ok, "the call after it succeeds (times: 1)");
  await go("faults");
  const fired = await page.$$eval("tr[data-rule] td", (cells) => cells[5]?.textContent.trim());
  check(fired === "1", `the rule fired once (${fired})`);

  // 5. Reset asks first.
  await leavePage();
  await (await byText("a", "State")).click();
  await page.waitForSelector("#reset", { timeout: 5000 });
  check(await page.$$eval("td", (cells) => cells.some((c) => c.textContent.replace(/\s+/g, " ").trim() === "Acme Robotics")),
    "the state page lists the demo enterprise");
  await answer(await page.$("#reset"), false);
  await page.waitForFunction(() => document.getElementById("status").textContent.trim() === "Nothing was changed.", { timeout: 5000 });
  check(Object.keys((await adminState()).enterprises).length === 1, "declined: the state is kept");
  await leavePage(); // the accepted reset reloads the page
  const question = await answer(await page.$("#reset"), true);
  check(question.startsWith("Reset the simulator?"), `it asked: "${question}"`);
  await page.waitForFunction(() => document.getElementById("enterprises-title")?.textContent.includes("(0)"), { timeout: 5000 });
  check(Object.keys((await adminState()).enterprises).length === 0, "accepted: no enterprise is left");

  // 6. Labelled controls on every page; then what every page reported.
  for (const path of ["", "state", "faults", "conformance"]) {
    await go(path);
    const unlabelled = await page.evaluate(unlabelledControls);
    check(unlabelled.length === 0, `/__sandbox/${path}: every control labelled ${unlabelled.join(" ")}`);
  }
  // The log is heard: an error thrown and a request to another origin, both on purpose
  // and in the page's own realm (BiDi's script.callFunction, which no CSP stops).
  await page.evaluate(() => {
    setTimeout(() => {
      throw new Error("canary error");
    });
    fetch("http://canary.invalid/x").catch(() => {});
  });
  await sleep(500); // the log events arrive over the BiDi socket
  await leavePage();
  const canaries = errors.filter((e) => e.includes("canary"));
  const unplanned = errors.filter((e) => !e.includes("canary"));
  check(canaries.some((e) => e.includes("canary error")) && canaries.some((e) => e.includes("canary.invalid")),
    `the log shows an error and the CSP blocking another origin, both made on purpose (${canaries.join(" | ")})`);
  check(visited.length >= 9, `${visited.length} pages looked at`);
  check(requestsHeard >= visited.length, `the network events are heard: ${requestsHeard} requests`);
  check(unplanned.length === 0, `no script or console errors ${unplanned.join(" | ")}`);
  check(foreign.length === 0, `no request left ${origin} ${foreign.join(" ")}`);
} finally {
  await browser.close();
}

console.log(problems.length === 0 ? "console in Firefox: every check passed" : `console in Firefox: ${problems.length} failed`);
process.exit(problems.length === 0 ? 0 : 1);
