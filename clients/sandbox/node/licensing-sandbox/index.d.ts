// Types of licensing-sandbox (index.js).

import type { components, paths } from "licensing-client/sandbox";

export declare const DEFAULT_APP_TOKEN: "sim-app-token";
export declare const DEFAULT_CLIENT_TOKEN: "sim-client-token";
export declare const DEFAULT_USER_TOKEN: "sim-user-token";
export declare const START_TIMEOUT_MS: number;
export declare const REQUEST_TIMEOUT_MS: number;
export declare const STOP_TIMEOUT_MS: number;
export declare const MAX_REPLY_BYTES: number;

/** The simulator could not be started, or its admin API refused a request. */
export declare class SandboxError extends Error {
  /** The admin API's HTTP status, when it answered. */
  readonly status?: number;
  /** The path of the offending field, when the refusal names one. */
  readonly field?: string;
}

/** `startSandbox`'s options: `seed`, `stateFile`, and the simulator's flags by their
 * camel-case names (`sim/README.md`, "Command line"). */
export interface SandboxOptions {
  /** `"demo"` (the built-in seed) or a seed file, loaded at start. */
  seed?: string;
  /** Keep the state in this file across runs. */
  stateFile?: string;
  /** Milliseconds to wait for the simulator to answer (default 30 s). */
  timeoutMs?: number;
  /** Bytes of an admin reply read at most (default `MAX_REPLY_BYTES`, 256 MiB). */
  maxReplyBytes?: number;
  /** Default `127.0.0.1:0`: a port the system picks. */
  addr?: string;
  appToken?: string;
  clientToken?: string;
  userToken?: string;
  /** Default: a random token; `null`: the admin API without one. */
  adminToken?: string | null;
  region?: "domestic" | "singapore";
  trialMemberLimit?: number;
  latencyMs?: number;
  journalCapacity?: number;
  [flag: string]: string | number | boolean | null | undefined | Array<string | number>;
}

export interface Tokens {
  /** The order service's application token (`Authorization: Bearer …`). */
  app: string;
  /** The member center's client token (`Authorization: Bearer …` and `clientToken`). */
  client: string;
  /** The member center's `userToken`. */
  user: string;
  /** The admin API's token, or null when it has none. */
  admin: string | null;
}

/** The admin API's schemas, as openapi-typescript generates them from
 * `sim/spec/sandbox.yaml` (licensing-client's `licensing-client/sandbox`). */
export type AdminSchemas = components["schemas"];
export type Clock = AdminSchemas["Clock"];
export type FaultRule = AdminSchemas["FaultRule"];
export type Fault = AdminSchemas["Fault"];
export type JournalPage = AdminSchemas["JournalPage"];
export type JournalFilters = NonNullable<paths["/__sandbox/v1/journal"]["get"]["parameters"]["query"]>;
export type StateDocument = AdminSchemas["StateDocument"];
export type Seed = AdminSchemas["Seed"];
export type SeedResult = AdminSchemas["SeedResult"];
export type ResetResult = AdminSchemas["ResetResult"];
export type ImportResult = AdminSchemas["ImportResult"];
/** What a fault rule matches besides its operation: `times`, `probability`, … */
export type FaultMatch = Omit<AdminSchemas["FaultRuleSpec"], "operation" | "fault">;

export type TenantReply = AdminSchemas["Tenant"];
export type TenantList = AdminSchemas["TenantList"];
/** What a new tenant starts with (every field optional): `name` (at most 100 characters),
 * `seed` (a built-in seed's name), `region`, `ttl` (seconds without a request before the
 * simulator removes it). */
export type TenantOptions = AdminSchemas["TenantSpec"];

/** The admin operations a sandbox and each of its tenants have alike (a tenant's act on
 * it alone). */
export declare abstract class AdminApi {
  /** The base address of both services and the admin API. */
  readonly url: string;
  /** One admin request (`path` below `/__sandbox/v1`). */
  request(method: string, path: string, body?: unknown, query?: Record<string, unknown>): Promise<unknown>;
  reset(enterpriseGlobalId?: string): Promise<ResetResult>;
  /** A built-in seed by name (`"demo"`) or a seed document. */
  seed(seed?: string | Seed): Promise<SeedResult>;
  state(): Promise<StateDocument>;
  importState(document: StateDocument): Promise<ImportResult>;
  /** Remembers the state for `restore` (taken once at start, after the seed). */
  checkpoint(): Promise<void>;
  /** Back to the checkpoint: its records and clock, no fault rules; the journal kept. */
  restore(): Promise<void>;
  journal(filters?: JournalFilters): Promise<JournalPage>;
  clearJournal(): Promise<void>;
  faults(): Promise<FaultRule[]>;
  addFault(operation: string, fault: Fault, match?: FaultMatch): Promise<FaultRule>;
  removeFault(id: number): Promise<void>;
  clearFaults(): Promise<void>;
  clock(): Promise<Clock>;
  setClock(nowMs: number, frozen?: boolean): Promise<Clock>;
  advanceClock(by: { ms?: number; seconds?: number; days?: number }): Promise<Clock>;
  /** `licensing-proxy coverage` over the journal (`format` from `path`'s extension:
   * `.json`, `.xml` for JUnit, else markdown); written to `path` too when given. */
  coverage(options?: { format?: "markdown" | "json" | "junit"; path?: string }): Promise<string>;
}

/** A running `licensing-sim` of this process's (`startSandbox`), or one that runs
 * elsewhere (`connectSandbox`), which `stop` leaves running. */
export declare class Sandbox extends AdminApi {
  /** null for a sandbox connected to. */
  readonly pid: number | null;
  readonly tokens: Tokens;
  /** Stops the simulator; resolves once it is gone (safe to call twice). */
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
  /** A new tenant: its own state, ids, clock, fault rules, journal and tokens, under its
   * own `url`; `await using` it, or call `delete()`. */
  tenant(options?: TenantOptions): Promise<Tenant>;
  /** The live tenants, oldest first, without their tokens. */
  tenants(): Promise<TenantList>;
  /** One tenant with its tokens; a SandboxError with status 404 when there is none. */
  getTenant(id: string): Promise<TenantReply>;
}

/** A tenant's credentials, accepted under its prefix only. */
export interface TenantTokens {
  app: string;
  client: string;
  user: string;
  admin: string;
}

/** One tenant of a sandbox. */
export declare class Tenant extends AdminApi {
  /** 32 lowercase hexadecimal digits. */
  readonly id: string;
  readonly name: string | null;
  readonly tokens: TenantTokens;
  /** The ids its seed gave what it named; null without a seed. */
  readonly seeded: TenantReply["seeded"] | null;
  /** Removes it with everything it holds; its prefix answers 404 from then on (safe to
   * call twice). */
  delete(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** `connectSandbox`'s options. */
export interface ConnectOptions {
  /** The sandbox's admin token (its `--admin-token`); none: a loopback sandbox without one. */
  adminToken?: string | null;
  /** Its default tenant's tokens, when they are not the simulator's defaults. */
  appToken?: string;
  clientToken?: string;
  userToken?: string;
  /** Bytes of an admin reply read at most (default `MAX_REPLY_BYTES`). */
  maxReplyBytes?: number;
  /** Milliseconds to keep trying until it answers (default 0: one try). */
  timeoutMs?: number;
}

/** The sandbox someone else runs at `url` (a team's shared one), once its admin API answers. */
export declare function connectSandbox(url: string, options?: ConnectOptions): Promise<Sandbox>;

/** Starts `licensing-sim` on a free loopback port; resolves once it answers. */
export declare function startSandbox(options?: SandboxOptions): Promise<Sandbox>;

/** The path of `licensing-sim`, `licensing-proxy` or `licensing` of the platform package. */
export declare function binary(name: "licensing-sim" | "licensing-proxy" | "licensing"): string;
