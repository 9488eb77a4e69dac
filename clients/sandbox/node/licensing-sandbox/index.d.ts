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

/** A running `licensing-sim` of this process's. */
export declare class Sandbox {
  /** The base address of both services and the admin API. */
  readonly url: string;
  readonly pid: number;
  readonly tokens: Tokens;
  /** Stops the simulator; resolves once it is gone (safe to call twice). */
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
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

/** Starts `licensing-sim` on a free loopback port; resolves once it answers. */
export declare function startSandbox(options?: SandboxOptions): Promise<Sandbox>;

/** The path of `licensing-sim`, `licensing-proxy` or `licensing` of the platform package. */
export declare function binary(name: "licensing-sim" | "licensing-proxy" | "licensing"): string;
