// What both console checks (check.mjs in Chromium, check_firefox.mjs in Firefox) share:
// how a check is reported, the SDK's environment for the `licensing` command line, and
// what counts as a labelled control.

/** `check(ok, what)` prints each check's verdict; `problems` lists those that failed. */
export function checker() {
  const problems = [];
  const check = (ok, what) => {
    console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
    if (!ok) problems.push(what);
  };
  return { problems, check };
}

/** The environment of an SDK call through the command line: both base URLs at `url`, the
 * simulator's demo credentials, and the command line's own state in `configDir`. */
export function sdkEnvironment(url, configDir) {
  return {
    ...process.env,
    LICENSING_ORDER_URL: url,
    LICENSING_MEMBER_URL: url,
    LICENSING_APP_TOKEN: "sim-app-token",
    LICENSING_CLIENT_TOKEN: "sim-client-token",
    LICENSING_USER_TOKEN: "sim-user-token",
    LICENSING_CONFIG_DIR: configDir,
  };
}

/** Run in the page: the start of each visible control that has no label, no aria-label
 * and no text of its own. */
export function unlabelledControls() {
  return [...document.querySelectorAll("input, select, textarea, button")]
    .filter((c) => c.type !== "hidden")
    .filter((c) => !(c.labels?.length || c.getAttribute("aria-label") || c.textContent.trim()))
    .map((c) => c.outerHTML.slice(0, 80));
}
