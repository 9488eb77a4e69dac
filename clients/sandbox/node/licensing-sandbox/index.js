// The licensing platform's simulator for tests in Node: `startSandbox(options)` starts
// `licensing-sim` (from the platform package, `licensing-sandbox-<os>-<cpu>`) on a free
// loopback port and resolves once it answers; its admin API is driven through the
// generated client of `sim/spec/sandbox.yaml` (`sandboxClient` of licensing-client, on
// openapi-fetch). `connectSandbox(url, { adminToken })` is one that runs elsewhere (a team's
// shared one); `sandbox.tenant()` a sandbox of its own inside either, under its own URL.
// Types: index.d.ts.

import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { sandboxClient } from "licensing-client";

export const DEFAULT_APP_TOKEN = "sim-app-token";
export const DEFAULT_CLIENT_TOKEN = "sim-client-token";
export const DEFAULT_USER_TOKEN = "sim-user-token";

/** Milliseconds `startSandbox` waits for the simulator to say where it listens and answer. */
export const START_TIMEOUT_MS = 30_000;
/** Milliseconds each admin request may take. */
export const REQUEST_TIMEOUT_MS = 30_000;
/** Milliseconds `stop` waits for a clean stop before it kills the process. */
export const STOP_TIMEOUT_MS = 10_000;
/** Bytes of an admin reply read at most. */
export const MAX_REPLY_BYTES = 256 * 1024 * 1024;

const PROGRAMS = ["licensing-sim", "licensing-proxy", "licensing"];
const TOKENS = ["appToken", "clientToken", "userToken", "adminToken"];
const COVERAGE_FORMATS = { ".json": "json", ".xml": "junit" };

/** The simulator could not be started, or its admin API refused a request. */
export class SandboxError extends Error {
  constructor(message, status, field) {
    super(message);
    this.name = "SandboxError";
    this.status = status;
    this.field = field;
  }
}

/**
 * The path of one of the programs (`licensing-sim`, `licensing-proxy`, `licensing`):
 * `LICENSING_SANDBOX_BIN_DIR` when set, else the platform package's.
 */
export function binary(name) {
  if (!PROGRAMS.includes(name)) throw new SandboxError(`no program ${name}`);
  const exe = process.platform === "win32" ? `${name}.exe` : name;
  const dir = process.env.LICENSING_SANDBOX_BIN_DIR;
  if (dir) return join(dir, exe);
  const platform = `licensing-sandbox-${process.platform}-${process.arch}`;
  try {
    return createRequire(import.meta.url).resolve(`${platform}/bin/${exe}`);
  } catch {
    throw new SandboxError(
      `${platform} is not installed: it is licensing-sandbox's optional dependency for this platform ` +
        `(npm leaves it out on another platform, or with --omit=optional); or set LICENSING_SANDBOX_BIN_DIR`,
    );
  }
}

/** `trialMemberLimit: 5` as `--trial-member-limit 5`; `true` as the bare flag. */
function flags(options) {
  const args = [];
  for (const [key, value] of Object.entries(options)) {
    const flag = "--" + key.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase());
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item === true) args.push(flag);
      else if (item !== false && item !== null && item !== undefined) args.push(flag, String(item));
    }
  }
  return args;
}

/** Every simulator this process started and has not seen end: asked to stop when the
 * process exits (an exit that runs no handler, a signal's, closes their stdin instead). */
const running = new Set();
process.on("exit", () => {
  for (const child of running) child.kill("SIGTERM");
});

/**
 * Starts `licensing-sim` and resolves once it answers.
 * @param {import("./index.js").SandboxOptions} [options]
 */
export async function startSandbox(options = {}) {
  const { seed, stateFile, timeoutMs = START_TIMEOUT_MS, maxReplyBytes = MAX_REPLY_BYTES, ...rest } = options;
  const tokens = {
    appToken: rest.appToken ?? DEFAULT_APP_TOKEN,
    clientToken: rest.clientToken ?? DEFAULT_CLIENT_TOKEN,
    userToken: rest.userToken ?? DEFAULT_USER_TOKEN,
    adminToken: "adminToken" in rest ? rest.adminToken : randomBytes(24).toString("base64url"),
  };
  for (const name of TOKENS) delete rest[name];
  // Tokens go through the environment, not the command line other users can read; each
  // is set or removed, so that an inherited one cannot differ from the one reported.
  const env = { ...process.env };
  for (const name of TOKENS) {
    const variable = "LICENSING_SIM_" + name.replace(/[A-Z]/g, (c) => "_" + c).toUpperCase();
    if (tokens[name] === null || tokens[name] === undefined) delete env[variable];
    else env[variable] = tokens[name];
  }
  const args = flags({ addr: "127.0.0.1:0", ...rest, seed, stateFile });
  const child = spawn(binary("licensing-sim"), [...args, "--exit-on-stdin-close"], {
    env,
    // A pipe on stdin that only this process holds: the simulator stops when it closes,
    // however this process ends. In a process group of its own (POSIX), so the terminal's
    // Ctrl-C reaches this process only, whose clean-up still finds the simulator running.
    stdio: ["pipe", "pipe", "pipe"],
    detached: process.platform !== "win32",
  });
  running.add(child);
  child.on("exit", () => running.delete(child));
  // Neither the child nor its pipes keep the event loop alive: a test runner can exit.
  child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr]) stream.unref?.();
  child.stdin.on("error", () => {});
  let log = "";
  child.stderr.on("data", (chunk) => {
    log = (log + chunk).slice(-4096);
  });
  try {
    const url = await listening(child, timeoutMs, () => log);
    const sandbox = new Sandbox(child, url, tokens, { maxReplyBytes });
    await sandbox.waitUntilAnswering(Date.now() + timeoutMs);
    await sandbox.checkpoint();
    return sandbox;
  } catch (error) {
    await end(child);
    throw error;
  }
}

function listening(child, timeoutMs, log) {
  return new Promise((resolve, reject) => {
    let seen = "";
    const timer = setTimeout(() => fail(`licensing-sim said nothing within ${timeoutMs} ms`), timeoutMs);
    const fail = (message) => {
      clearTimeout(timer);
      const tail = log().trim();
      reject(new SandboxError(tail ? `${message}: ${tail}` : message));
    };
    child.on("error", (error) => fail(`licensing-sim did not start: ${error.message}`));
    // After its streams have closed, so that what it wrote on stderr is in the message.
    child.on("close", (code) => fail(`licensing-sim did not start (exit status ${code})`));
    child.stdout.on("data", (chunk) => {
      seen = (seen + chunk).slice(0, 4096);
      const end = seen.indexOf("\n");
      if (end < 0) return;
      clearTimeout(timer);
      const match = /^listening on (https?:\/\/\S+)$/.exec(seen.slice(0, end).trim());
      if (match) resolve(match[1]);
      else fail(`unexpected ${JSON.stringify(seen.slice(0, end))}`);
    });
  });
}

/** Ends the simulator: stdin closed, then SIGTERM, then SIGKILL after the timeout. */
function end(child, timeoutMs = STOP_TIMEOUT_MS) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    const term = setTimeout(() => child.kill("SIGTERM"), Math.min(timeoutMs, 2000));
    child.once("exit", () => {
      clearTimeout(kill);
      clearTimeout(term);
      resolve();
    });
    child.stdin.end();
  });
}

/** Calls one generated operation with the admin client: `this[CALL](what, (admin) => …)`,
 * for the subclasses below, the private field staying private. */
const CALL = Symbol("call");

/** The admin operations a sandbox and each of its tenants have alike: a tenant's are the
 * same calls under its prefix, with its own admin token. */
class AdminApi {
  #admin;
  #checkpoint = null;

  constructor(url, adminToken, { maxReplyBytes = MAX_REPLY_BYTES } = {}) {
    this.url = url;
    const fetch = (request) => boundedFetch(request, maxReplyBytes);
    this.#admin = sandboxClient(url, adminToken ?? undefined, { fetch });
  }

  /** The reply of one generated call: its data (null when empty), or a SandboxError. */
  async [CALL](what, send) {
    let reply;
    try {
      reply = await send(this.#admin);
    } catch (error) {
      throw error instanceof SandboxError ? error : new SandboxError(`${what}: ${error.cause?.message ?? error.message}`);
    }
    const { data, error, response } = reply;
    if (!response.ok) {
      const message = (typeof error === "object" && error?.message) || response.statusText || `HTTP ${response.status}`;
      throw new SandboxError(`${what}: HTTP ${response.status}: ${message}`, response.status, error?.field);
    }
    return data ?? null;
  }

  /** One admin request (`path` below `/__sandbox/v1`), for what the methods below do not
   * cover: the decoded JSON reply or null. */
  request(method, path, body, query) {
    const params = Object.fromEntries(Object.entries(query ?? {}).filter(([, v]) => v !== undefined && v !== null));
    return this[CALL](`${method} ${path}`, (a) => a.request(method, `/__sandbox/v1${path}`, { body, params: { query: params } }));
  }

  reset(enterpriseGlobalId) {
    return this[CALL]("reset", (a) => a.POST("/__sandbox/v1/reset", { body: enterpriseGlobalId ? { enterpriseGlobalId } : {} }));
  }
  seed(seed = "demo") {
    return typeof seed === "string"
      ? this[CALL](`seed ${seed}`, (a) => a.POST("/__sandbox/v1/seeds/{name}", { params: { path: { name: seed } } }))
      : this[CALL]("seed", (a) => a.POST("/__sandbox/v1/seed", { body: seed }));
  }
  state() {
    return this[CALL]("export state", (a) => a.GET("/__sandbox/v1/state"));
  }
  importState(document) {
    return this[CALL]("import state", (a) => a.PUT("/__sandbox/v1/state", { body: document }));
  }
  async checkpoint() {
    this.#checkpoint = await this.state();
  }
  async restore() {
    await this.clearFaults();
    await this.reset();
    if (this.#checkpoint !== null) await this.importState(this.#checkpoint);
  }
  journal(filters) {
    const query = Object.fromEntries(Object.entries(filters ?? {}).filter(([, v]) => v !== undefined && v !== null));
    return this[CALL]("journal", (a) => a.GET("/__sandbox/v1/journal", { params: { query } }));
  }
  async clearJournal() {
    await this[CALL]("clear journal", (a) => a.DELETE("/__sandbox/v1/journal"));
  }
  faults() {
    return this[CALL]("faults", (a) => a.GET("/__sandbox/v1/faults"));
  }
  addFault(operation, fault, match = {}) {
    return this[CALL]("add fault", (a) => a.POST("/__sandbox/v1/faults", { body: { operation, fault, ...match } }));
  }
  async removeFault(id) {
    const path = { id: Number(id) };
    await this[CALL](`remove fault ${id}`, (a) => a.DELETE("/__sandbox/v1/faults/{id}", { params: { path } }));
  }
  async clearFaults() {
    await this[CALL]("clear faults", (a) => a.DELETE("/__sandbox/v1/faults"));
  }
  clock() {
    return this[CALL]("clock", (a) => a.GET("/__sandbox/v1/clock"));
  }
  setClock(nowMs, frozen = true) {
    return this[CALL]("set clock", (a) => a.PUT("/__sandbox/v1/clock", { body: { now: Math.trunc(nowMs), frozen } }));
  }
  advanceClock({ ms = 0, seconds = 0, days = 0 } = {}) {
    const body = { ms: Math.trunc(ms + seconds * 1000 + days * 86_400_000) };
    return this[CALL]("advance clock", (a) => a.POST("/__sandbox/v1/clock/advance", { body }));
  }

  /** `licensing-proxy coverage` over the journal; written to `path` too when given. */
  async coverage({ format, path } = {}) {
    const suffix = path ? path.slice(path.lastIndexOf(".")).toLowerCase() : "";
    const chosen = format ?? COVERAGE_FORMATS[suffix] ?? "markdown";
    const dir = mkdtempSync(join(tmpdir(), "licensing-coverage-"));
    try {
      const journal = join(dir, "journal.json");
      writeFileSync(journal, JSON.stringify(await this.journal()));
      const report = await new Promise((resolve, reject) => {
        execFile(
          binary("licensing-proxy"),
          ["coverage", "--format", chosen, journal],
          { maxBuffer: MAX_REPLY_BYTES, timeout: 120_000 },
          (error, stdout, stderr) =>
            error ? reject(new SandboxError(`licensing-proxy coverage failed: ${stderr.slice(-2000)}`)) : resolve(stdout),
        );
      });
      if (path) writeFileSync(path, report);
      return report;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

/** A running `licensing-sim` of this process's (`startSandbox`), or one that runs
 * elsewhere, a team's shared one (`connectSandbox`), never stopped from here. */
class Sandbox extends AdminApi {
  #child;
  #maxReplyBytes;

  constructor(child, url, tokens, { maxReplyBytes = MAX_REPLY_BYTES } = {}) {
    super(url, tokens.adminToken, { maxReplyBytes });
    this.#child = child;
    this.#maxReplyBytes = maxReplyBytes;
    this.pid = child?.pid ?? null;
    this.tokens = { app: tokens.appToken, client: tokens.clientToken, user: tokens.userToken, admin: tokens.adminToken ?? null };
  }

  toJSON() {
    // The tokens stay out of logs and snapshots.
    return { url: this.url, pid: this.pid };
  }

  async waitUntilAnswering(deadline) {
    for (;;) {
      try {
        await this.clock();
        return;
      } catch (error) {
        if (Date.now() > deadline || (this.#child && this.#child.exitCode !== null)) {
          throw new SandboxError(`licensing-sim at ${this.url} does not answer: ${error.message}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }

  /** Stops the simulator and resolves once it is gone (safe to call twice); one connected
   * to is left running. */
  stop() {
    return this.#child ? end(this.#child) : Promise.resolve();
  }

  async [Symbol.asyncDispose]() {
    await this.stop();
  }

  /** A new tenant: a sandbox of its own under this one's address (`name`, `seed`: a
   * built-in seed's name, `region`, `ttl` in seconds). */
  async tenant(options = {}) {
    const body = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined && v !== null));
    const reply = await this[CALL]("create tenant", (a) => a.POST("/__sandbox/v1/tenants", { body }));
    const remove = () => this[CALL](`delete tenant ${reply.id}`, (a) => a.DELETE("/__sandbox/v1/tenants/{id}", { params: { path: { id: reply.id } } }));
    const tenant = new Tenant(reply, remove, { maxReplyBytes: this.#maxReplyBytes });
    try {
      await tenant.checkpoint();
    } catch (error) {
      await tenant.delete();
      throw error;
    }
    return tenant;
  }

  /** The live tenants, oldest first, without their tokens (`{ tenants, max }`). */
  tenants() {
    return this[CALL]("tenants", (a) => a.GET("/__sandbox/v1/tenants"));
  }

  /** One tenant with its tokens; a SandboxError with status 404 when there is none. */
  getTenant(id) {
    return this[CALL](`tenant ${id}`, (a) => a.GET("/__sandbox/v1/tenants/{id}", { params: { path: { id: String(id) } } }));
  }
}

/** One tenant of a sandbox: `url` for every client, its own tokens (accepted under its
 * prefix only) and admin operations acting on it alone, until `delete()`. */
class Tenant extends AdminApi {
  #remove;

  constructor(reply, remove, options) {
    super(reply.url, reply.tokens.admin, options);
    this.#remove = remove;
    this.id = reply.id;
    this.name = reply.name ?? null;
    this.tokens = { ...reply.tokens };
    this.seeded = reply.seeded ?? null;
  }

  toJSON() {
    return { id: this.id, url: this.url };
  }

  /** Removes the tenant with everything it holds; its prefix answers 404 from then on.
   * Safe to call twice; one already removed (its time to live past) is no error. */
  async delete() {
    const remove = this.#remove;
    this.#remove = null;
    if (!remove) return;
    try {
      await remove();
    } catch (error) {
      if (!(error instanceof SandboxError && error.status === 404)) throw error;
    }
  }

  async [Symbol.asyncDispose]() {
    await this.delete();
  }
}

/**
 * The sandbox someone else runs at `url` (a team's shared one), once its admin API answers.
 * @param {string} url
 * @param {{ adminToken?: string | null, appToken?: string, clientToken?: string, userToken?: string, maxReplyBytes?: number, timeoutMs?: number }} [options]
 */
export async function connectSandbox(url, options = {}) {
  const { adminToken = null, maxReplyBytes = MAX_REPLY_BYTES, timeoutMs = 0 } = options;
  const tokens = {
    appToken: options.appToken ?? DEFAULT_APP_TOKEN,
    clientToken: options.clientToken ?? DEFAULT_CLIENT_TOKEN,
    userToken: options.userToken ?? DEFAULT_USER_TOKEN,
    adminToken,
  };
  const sandbox = new Sandbox(null, url.replace(/\/+$/, ""), tokens, { maxReplyBytes });
  try {
    await sandbox.waitUntilAnswering(Date.now() + timeoutMs);
  } catch (error) {
    throw new SandboxError(`no sandbox answers at ${url}: ${error.message}`, error.status);
  }
  return sandbox;
}

/** `fetch` with a timeout, whose reply's body is read whole here and refused past `limit`
 * bytes, however it is framed (a Content-Length that lies, chunks without end). */
async function boundedFetch(request, limit) {
  const reply = await fetch(request, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  const length = Number(reply.headers.get("content-length") ?? 0);
  if (length > limit) {
    await reply.body?.cancel();
    throw new SandboxError(`an admin reply of ${length} bytes, more than ${limit}`);
  }
  const chunks = [];
  let seen = 0;
  for await (const chunk of reply.body ?? []) {
    seen += chunk.byteLength;
    if (seen > limit) throw new SandboxError(`an admin reply over ${limit} bytes`);
    chunks.push(chunk);
  }
  const body = reply.status === 204 || reply.status === 304 ? null : Buffer.concat(chunks);
  return new Response(body, { status: reply.status, statusText: reply.statusText, headers: reply.headers });
}

export { Sandbox, Tenant };
