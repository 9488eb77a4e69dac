// Opens each API reference page in headless Chromium and checks the rendered DOM against
// the specs (`cargo xtask docs --check` writes what to expect and runs this script):
//
// - every operation has its own rendered section, showing its operation id, method, path
//   and summary, and the operation's codes: for a service, a row for each documented
//   business code and the 200 and 299 responses; for the sandbox admin API, each
//   documented error status;
// - every code of the spec (the `ErrorCode` catalogue included) is on the page;
// - there are no more operation sections than operations, and the page raises no
//   JavaScript error. Network access is refused: the page must be self-contained.
//
// Saves a screenshot of each page next to it and prints its path.
//
// Usage: node check.mjs EXPECTED.json   (EXPECTED: {browser, pages: [{name, html,
// screenshot, service, operations: [{operationId, method, path, summary, codes}], codes}]})
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

import { chromium } from "playwright-core";

const expected = JSON.parse(readFileSync(process.argv[2], "utf8"));
const browser = await chromium.launch({
  executablePath: expected.browser,
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

let failures = 0;
try {
  for (const page of expected.pages) {
    failures += await check(page);
  }
} finally {
  await browser.close();
}
console.log(failures === 0 ? "all pages passed" : `${failures} problems`);
process.exit(failures === 0 ? 0 : 1);

async function check(spec) {
  const problems = [];
  // A fresh context per page: its own profile state, nothing carried over.
  const context = await browser.newContext({ viewport: { width: 1440, height: 1000 } });
  const tab = await context.newPage();
  const blocked = [];
  await tab.route(/^(https?|wss?):/, (route) => {
    blocked.push(route.request().url());
    return route.abort();
  });
  tab.on("pageerror", (error) => problems.push(`JavaScript error: ${error.message}`));

  await tab.goto(pathToFileURL(spec.html).href, { waitUntil: "load" });
  const sections = await renderedSections(tab, spec.screenshot);

  if (sections.length !== spec.operations.length) {
    problems.push(`${sections.length} operation sections rendered, ${spec.operations.length} operations in the spec`);
  }
  for (const op of spec.operations) {
    const idLine = new RegExp(`^Operation id: ${op.operationId}$`, "m");
    const matching = sections.filter((text) => idLine.test(text));
    if (matching.length !== 1) {
      problems.push(`${op.operationId}: ${matching.length} sections show this operation id`);
      continue;
    }
    const [text] = matching;
    const lines = new Set(text.split("\n").map((line) => line.trim()));
    for (const part of [op.method, op.path, op.summary]) {
      if (!lines.has(part)) {
        problems.push(`${op.operationId}: "${part}" is not shown`);
      }
    }
    const statuses = spec.service ? ["200", "299"] : [];
    for (const status of statuses) {
      if (!lines.has(status)) {
        problems.push(`${op.operationId}: no ${status} response`);
      }
    }
    for (const code of op.codes) {
      // A service's codes are items of the business-code list ("<code>: <meaning>"); the
      // admin API's are its response statuses.
      const shown = spec.service ? new RegExp(`^${code}: \\S`, "m").test(text) : lines.has(code);
      if (!shown) {
        problems.push(`${op.operationId}: code ${code} is not shown`);
      }
    }
  }
  // The page's codes: those of the operation sections and the rest of the page.
  const pageText = [await tab.evaluate(() => document.body.innerText), ...sections].join("\n");
  const pageLines = new Set(pageText.split(/[\n\t:]/).map((line) => line.trim()));
  const missing = spec.codes.filter((code) => !pageLines.has(code));
  if (missing.length > 0) {
    problems.push(`codes not on the page: ${missing.join(", ")}`);
  }

  await context.close();

  const codes = spec.codes.length;
  console.log(
    `${spec.name}: ${spec.operations.length - countOf(problems, spec.operations)}/${spec.operations.length} operations, ` +
      `${codes - missing.length}/${codes} codes on the page` +
      (blocked.length > 0 ? `; refused ${blocked.length} network request(s): ${[...new Set(blocked)].join(", ")}` : ""),
  );
  console.log(`${spec.name}: screenshot ${spec.screenshot}`);
  for (const problem of problems) {
    console.log(`FAIL ${spec.name}: ${problem}`);
  }
  return problems.length;
}

/** How many operations some problem names. */
function countOf(problems, operations) {
  return operations.filter((op) => problems.some((p) => p.startsWith(`${op.operationId}:`))).length;
}

/**
 * The text of each operation section, rendered. The page shows one tag's operations at a
 * time (opening a tag closes the others) and renders an operation's section only once it
 * scrolls into view, so each tag is opened in turn and each of its sections scrolled to.
 * A click before the page has hydrated does nothing, so a tag is clicked until its
 * sections appear. The screenshot is taken at the first operation.
 */
async function renderedSections(tab, screenshot) {
  const toggle = "[data-section-id] > button";
  await tab.locator(toggle).first().waitFor({ timeout: 30_000 });
  // The page renders its lower tags' toggles only once it has been scrolled towards them:
  // the list is read again after scrolling to the end until it stops growing.
  const readTags = () =>
    tab.evaluate(
      (selector) => [...document.querySelectorAll(selector)].map((b) => b.parentElement.dataset.sectionId),
      toggle,
    );
  let tags = await readTags();
  for (let attempt = 0; attempt < 20; attempt += 1) {
    await tab.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
    await tab.waitForTimeout(300);
    const again = await readTags();
    if (again.length === tags.length && attempt > 0) break;
    tags = again.length > tags.length ? again : tags;
  }
  await tab.evaluate(() => window.scrollTo(0, 0));
  const texts = [];
  for (const tag of tags) {
    const own = tab.locator(`[data-section-id^="${tag}/"]`);
    const button = tab.locator(`[data-section-id="${tag}"] > button`);
    // A second click on a tag that opened late closes it again, so a click is repeated
    // only when the tag does not say it is open, after a wait long enough for a busy
    // machine to render what the first one opened.
    for (let attempt = 0; attempt < 12 && (await own.count()) === 0; attempt += 1) {
      const expanded = (await button.count()) > 0 && (await button.first().getAttribute("aria-expanded")) === "true";
      if ((await button.count()) > 0 && !expanded) {
        await button.first().click();
      }
      await own
        .first()
        .waitFor({ timeout: 5000 })
        .catch(() => {}); // not hydrated yet: click again
    }
    const ids = await own.evaluateAll((sections) => sections.map((s) => s.dataset.sectionId));
    for (const id of ids) {
      const text = await renderedText(tab, id);
      if (texts.length === 0) {
        await tab.screenshot({ path: screenshot });
      }
      texts.push(text);
    }
  }
  return texts;
}

/**
 * Scrolls to a section until it has rendered: its text is there and no longer changes.
 * (Rendering replaces the placeholder's element, so a scroll may hit a detached one.)
 */
async function renderedText(tab, id) {
  const section = tab.locator(`[data-section-id="${id}"]`);
  const deadline = Date.now() + 15_000;
  let last = "";
  while (Date.now() < deadline) {
    await section.scrollIntoViewIfNeeded({ timeout: 2000 }).catch(() => {});
    const text = await section.innerText({ timeout: 2000 }).catch(() => "");
    if (text.trim() !== "" && text === last) {
      return text;
    }
    last = text;
    await tab.waitForTimeout(150);
  }
  return last;
}
