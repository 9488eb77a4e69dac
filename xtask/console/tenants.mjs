// The tenants in the console (check.mjs's step 10), against a simulator started with an
// admin token (`cargo xtask console` starts a second one for it):
//
// a. signed in with the simulator's own admin token, the Tenants page lists both tenants
//    (names escaped, no token shown) and opens one's console: its journal shows its own
//    call, its navigation has no Tenants section, its state not the other's; a fault rule
//    added through its form lands in that tenant alone; the picker opens the other
//    tenant's console too;
// b. signed in at a tenant's console with that tenant's admin token, its pages open; the
//    other tenant's pages (whose demo enterprise the simulator's admin saw in a.), the
//    simulator's list and its own pages answer with the sign-in form, nothing of theirs
//    shown, also with the session cookie copied to their paths; there is no list under
//    the tenant's prefix; neither the other's sign-in form nor the simulator's takes
//    that token;
// c. axe-core finds no violation on the Tenants page nor on a tenant's journal; no page
//    logs an error or sends a request off the simulator's origin.
/** An admin API call with `token`: the reply's status and JSON. */
async function admin(url, token, method, path, body) {
  const response = await fetch(`${url}/__sandbox/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, json: text ? JSON.parse(text) : null };
}

async function signIn(page, root, token) {
  await page.goto(root);
  await page.getByLabel("Admin token").fill(token);
  await Promise.all([page.waitForEvent("load"), page.getByRole("button", { name: "Sign in" }).click()]);
}

/** Step 10; `sdk(env, ...args)` runs the command line, `axeViolations(page)` runs axe,
 * `watched(context, origin, options)` opens a page whose errors and foreign requests it
 * collects. */
export async function checkTenants({ browser, config, check, sdk, axeViolations, watched }) {
  const base = config.tenantsUrl;
  const origin = new URL(base).origin;
  const token = config.tenantsAdminToken;
  const red = (await admin(base, token, "POST", "/tenants", { name: "red <i>team</i>" })).json;
  const blue = (await admin(base, token, "POST", "/tenants", { name: "blue team", seed: "demo" })).json;
  const blueName = blue?.seeded?.enterprises?.[0]?.name;
  check(red?.tokens && blue?.tokens && blueName, `two tenants created, one seeded with the demo enterprise (${blueName})`);
  const redEnv = {
    ...process.env,
    LICENSING_ORDER_URL: red.url,
    LICENSING_MEMBER_URL: red.url,
    LICENSING_APP_TOKEN: red.tokens.app,
    LICENSING_CONFIG_DIR: config.configDir,
  };
  check(sdk(redEnv, "order", "allocate-shell-nums", "--size", "1").ok, "an SDK call into the red tenant");
  const redRoot = `${base}/t/${red.id}/__sandbox/`;
  const blueRoot = `${base}/t/${blue.id}/__sandbox/`;

  // a. The simulator's admin: the picker, then a tenant's console.
  const adminContext = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const a = await watched(adminContext, origin, { refusals: true });
  await signIn(a.page, `${base}/__sandbox/`, token);
  await a.page.getByRole("navigation").getByRole("link", { name: "Tenants" }).click();
  check((await a.page.locator("h1").textContent()) === "Tenants", "the Tenants page opens from the navigation");
  const listed = await a.page.locator("#tenants tbody tr").evaluateAll((rows) => rows.map((r) => r.dataset.tenant));
  check(listed.join() === [red.id, blue.id].join(), `both tenants listed, oldest first (${listed.length})`);
  const listText = await a.page.locator("main").innerText();
  check(listText.includes("red <i>team</i>") && (await a.page.locator("#tenants i").count()) === 0, "a tenant's name shown as text, not markup");
  check(![red, blue].some((t) => Object.values(t.tokens).some((v) => listText.includes(v))), "no tenant's token on the page");
  await Promise.all([
    a.page.waitForURL(redRoot),
    a.page.getByRole("button", { name: `Open console of tenant ${red.id}` }).click(),
  ]);
  check(new URL(a.page.url()).pathname === `/t/${red.id}/__sandbox/`, `the red tenant's console opens (${a.page.url()})`);
  const call = a.page.locator('#journal > li.entry[data-operation="allocateShellNums"]');
  check((await call.count()) === 1, "its journal shows its own call");
  const sections = await a.page.getByRole("navigation").getByRole("link").allTextContents();
  check(!sections.includes("Tenants"), `its navigation has no Tenants section (${sections.join(", ")})`);
  check((await a.page.locator(".brand").innerText()).includes(`/t/${red.id}`), "the header names the tenant's prefix");
  await a.page.getByRole("navigation").getByRole("link", { name: "State", exact: true }).click();
  check(!(await a.page.locator("main").innerText()).includes(blueName), "its state shows nothing of the blue tenant");
  await a.page.getByRole("link", { name: "Faults & clock" }).click();
  await a.page.getByLabel("operation (required)").fill("allocateShellNums");
  await a.page.getByLabel("kind (required)").selectOption("code");
  await a.page.getByLabel("code", { exact: true }).fill("13004");
  await a.page.getByRole("button", { name: "Add rule" }).click();
  await a.page.locator("tr[data-rule]").first().waitFor();
  const redRules = (await admin(red.url, red.tokens.admin, "GET", "/faults")).json;
  const blueRules = (await admin(blue.url, blue.tokens.admin, "GET", "/faults")).json;
  check(redRules.length === 1 && blueRules.length === 0, `the rule added through its form is the red tenant's alone (${redRules.length}, ${blueRules.length})`);
  const failed = sdk(redEnv, "order", "allocate-shell-nums", "--size", "1");
  check(!failed.ok && failed.out.includes("13004"), "and fires on its next call");
  // The blue tenant's state, as its console shows it to the simulator's admin: what the
  // red tenant's token must not see of it below.
  await a.page.goto(`${base}/__sandbox/tenants`);
  await Promise.all([
    a.page.waitForURL(blueRoot),
    a.page.getByRole("button", { name: `Open console of tenant ${blue.id}` }).click(),
  ]);
  await a.page.goto(`${blueRoot}state`);
  check((await a.page.locator("main").innerText()).includes(blueName), `the picker opens the blue tenant's console too, its state showing ${blueName}`);

  // b. A tenant's admin token: its own pages, nothing else.
  const tenantContext = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const b = await watched(tenantContext, origin, { refusals: true });
  await signIn(b.page, redRoot, red.tokens.admin);
  check(new URL(b.page.url()).pathname === `/t/${red.id}/__sandbox/` && (await b.page.locator("#journal").count()) === 1,
    "signed in with its token, the red tenant's journal opens");
  const own = await b.page.goto(`${redRoot}faults`);
  const rules = await b.page.locator("tr[data-rule]").count();
  check(own.status() === 200 && rules === 1, `and its Faults page, with the rule added above (HTTP ${own.status()}, ${rules} rules)`);
  // A refusal: HTTP 401 and the sign-in form, with none of `secrets` (what the refused
  // page would show) on the page. A tenant's own sign-in form names its prefix, so ids
  // are secrets only where the page would list them.
  const refused = async (url, what, secrets) => {
    const response = await b.page.goto(url);
    const text = await b.page.locator("body").innerText();
    const shown = secrets.filter((s) => text.includes(s));
    const form = await b.page.getByLabel("Admin token").count();
    const data = await b.page.locator("#journal, #tenants, table").count();
    check(response.status() === 401 && form === 1 && data === 0 && shown.length === 0,
      `${what}: the sign-in form, nothing of it (HTTP ${response.status()}, ${data} tables or journals${shown.length ? `, shows ${shown.join(", ")}` : ""})`);
  };
  const blueState = [blueName];
  const list = [red.id, blue.id, "red <i>team</i>", "blue team"];
  await refused(`${blueRoot}state`, "the blue tenant's state", blueState);
  await refused(blueRoot, "the blue tenant's journal", blueState);
  await refused(`${base}/__sandbox/tenants`, "the simulator's tenant list", list);
  await refused(`${base}/__sandbox/state`, "the simulator's own state", list);
  // (An empty 404 is a failed navigation to the browser; the context's request, with its
  // cookies, reads it.)
  const notFound = await tenantContext.request.get(`${redRoot}tenants`);
  check(notFound.status() === 404, `no tenant list under its prefix (HTTP ${notFound.status()})`);
  const [session] = (await tenantContext.cookies()).filter((c) => c.path === `/t/${red.id}/__sandbox`);
  check(session?.httpOnly && session?.sameSite === "Strict", `its session cookie is HttpOnly, SameSite=Strict, for /t/${red.id}/__sandbox alone`);
  await tenantContext.addCookies([
    { ...session, path: `/t/${blue.id}/__sandbox` },
    { ...session, path: "/__sandbox" },
  ]);
  await refused(`${blueRoot}state`, "the blue tenant's state with the cookie copied to its path", blueState);
  await refused(`${base}/__sandbox/tenants`, "the simulator's list with the cookie copied to its path", list);
  for (const [where, root] of [["the blue tenant's", blueRoot], ["the simulator's", `${base}/__sandbox/`]]) {
    await signIn(b.page, root, red.tokens.admin);
    const error = await b.page.locator(".error").innerText();
    const data = await b.page.locator("#journal, #tenants, table").count();
    check(error.includes("not accepted") && data === 0, `${where} sign-in does not take the red tenant's token (${error})`);
  }

  // c. axe, errors, origins.
  const axeContext = await browser.newContext({
    bypassCSP: true,
    viewport: { width: 1400, height: 900 },
    extraHTTPHeaders: { authorization: `Bearer ${token}` },
  });
  const axePage = await axeContext.newPage();
  await axePage.goto(`${base}/__sandbox/tenants`);
  let violations = await axeViolations(axePage);
  check(violations.length === 0, `/__sandbox/tenants: axe finds no violation ${violations.join(" | ")}`);
  await axeContext.setExtraHTTPHeaders({ authorization: `Bearer ${red.tokens.admin}` });
  await axePage.goto(redRoot);
  violations = await axeViolations(axePage);
  check(violations.length === 0, `a tenant's journal: axe finds no violation ${violations.join(" | ")}`);
  for (const [who, seen] of [["the simulator's admin", a], ["a tenant's admin", b]]) {
    check(seen.errors.length === 0, `${who}: no console errors ${seen.errors.join(" | ")}`);
    check(seen.foreign.length === 0, `${who}: no request left ${origin} ${seen.foreign.join(" ")}`);
  }
  await Promise.all([adminContext.close(), tenantContext.close(), axeContext.close()]);
  const deleted = await Promise.all([red, blue].map((t) => admin(base, token, "DELETE", `/tenants/${t.id}`)));
  check(deleted.every((d) => d.status === 204), "both tenants deleted");
}
