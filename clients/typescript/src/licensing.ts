/**
 * Typed clients of the licensing platform's two services (and the simulator's sandbox
 * admin API) on top of `openapi-fetch` and the types `openapi-typescript` generates from
 * `spec/*.yaml` into `./generated/`.
 *
 * What this module adds is what the Rust SDK's runtime adds to every request:
 *
 * - a fresh `g_nonce` query parameter on every request (24 random bytes, URL-safe
 *   base64), so callers never pass one: it is removed from the operations' types;
 * - the service's credentials: `Authorization: Bearer <app token>` and
 *   `Content-Type: application/json` (on every request, bodiless ones too) for the order
 *   service; `Authorization: Bearer <client token>`, `clientToken` and `userToken` for the
 *   member center;
 * - the reply envelope read as a result: `unwrap` returns `data` or throws a
 *   `BusinessError`, `outcome` returns a discriminated union. A business exception comes
 *   back as HTTP 299, which `fetch` counts as `ok`, so `openapi-fetch` hands its body over
 *   as `data`; both statuses share one envelope schema per operation, and the error side
 *   is typed from the operation's `299` response.
 *
 * ```ts
 * const order = orderClient("http://127.0.0.1:8080", "APP_ACCESS_TOKEN");
 * const numbers = await unwrap(order.POST("/order/api/order/v1/shellnums", { body: { size: 3 } }));
 * ```
 */
import createClient, { type Client, type ClientOptions, type Middleware } from "openapi-fetch";

import type { components as MemberComponents, paths as MemberPaths } from "./generated/member.js";
import type { components as OrderComponents, paths as OrderPaths } from "./generated/order.js";
import type { paths as SandboxPaths } from "./generated/sandbox.js";

/** The order service's paths, without the `g_nonce` the client adds. */
export type OrderApi = WithoutNonce<OrderPaths>;
/** The member center's paths, without the `g_nonce` the client adds. */
export type MemberApi = WithoutNonce<MemberPaths>;
/** The order service's component schemas (`OrderSchemas["EnterpriseCustomer"]`, …). */
export type OrderSchemas = OrderComponents["schemas"];
/** The member center's component schemas (`MemberSchemas["MemberListItem"]`, …). */
export type MemberSchemas = MemberComponents["schemas"];
/** The error codes the order service documents. */
export type OrderErrorCode = OrderSchemas["ErrorCode"];
/** The error codes the member center documents. */
export type MemberErrorCode = MemberSchemas["ErrorCode"];

/** Options passed on to `openapi-fetch` (a custom `fetch`, headers, …). */
export type Options = Omit<ClientOptions, "baseUrl">;

/**
 * A client of the order service at `baseUrl` (the platform's base address, without the
 * `/order/api/order/v1` prefix, which is part of every path).
 */
export function orderClient(baseUrl: string, appToken: string, options: Options = {}): Client<OrderApi> {
  const client = createClient<OrderApi>({ ...options, baseUrl });
  client.use(
    credentials({
      Authorization: `Bearer ${appToken}`,
      // The order document requires it on every endpoint, bodiless ones included.
      "Content-Type": "application/json",
    }),
  );
  return client;
}

/** A client of the member center at `baseUrl`; every call sends both tokens. */
export function memberClient(
  baseUrl: string,
  clientToken: string,
  userToken: string,
  options: Options = {},
): Client<MemberApi> {
  const client = createClient<MemberApi>({ ...options, baseUrl });
  client.use(
    credentials({
      Authorization: `Bearer ${clientToken}`,
      clientToken,
      userToken,
    }),
  );
  return client;
}

/**
 * A client of the simulator's sandbox admin API (`licensing-sim`): plain HTTP statuses, no
 * `g_nonce`; `adminToken` when the simulator runs with `--admin-token`.
 */
export function sandboxClient(baseUrl: string, adminToken?: string, options: Options = {}): Client<SandboxPaths> {
  const client = createClient<SandboxPaths>({ ...options, baseUrl });
  if (adminToken !== undefined) {
    client.use({
      onRequest({ request }) {
        request.headers.set("Authorization", `Bearer ${adminToken}`);
        return request;
      },
    });
  }
  return client;
}

/** 192 bits from the platform's CSPRNG, URL-safe base64 without padding: 32 characters. */
export function nonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return btoa(String.fromCharCode(...bytes))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");
}

function credentials(headers: Record<string, string>): Middleware {
  return {
    onRequest({ request }) {
      // Set on the request itself, after the caller's headers, as the Rust runtime does:
      // a stale or foreign value cannot win.
      for (const [name, value] of Object.entries(headers)) {
        request.headers.set(name, value);
      }
      const url = new URL(request.url);
      url.searchParams.set("g_nonce", nonce());
      return new Request(url, request);
    },
  };
}

/** The envelope every operation of both services answers with (HTTP 200 and 299). */
export interface Envelope {
  code: number | string;
  message: string;
  cause?: string;
  data?: unknown;
}

/**
 * A business exception: the platform answered HTTP 299 (or HTTP 200 with a non-zero
 * `code`). `reply` is the whole envelope, typed as the operation's `299` response, so a
 * partial failure's `data` (`60027` on `addMembers`: both lists) is at hand.
 */
export class BusinessError<Reply extends Envelope = Envelope> extends Error {
  /** The business code, always a string (`"13004"`, `"60027"`). */
  readonly code: string;
  /** The envelope's `cause`, when it has one. */
  override readonly cause: string | undefined;

  constructor(
    /** The whole reply envelope. */
    readonly reply: Reply,
    /** The HTTP status (299 for a business exception). */
    readonly status: number,
  ) {
    super(`${reply.code}: ${reply.message}${reply.cause ? ` (${reply.cause})` : ""}`);
    this.name = "BusinessError";
    this.code = String(reply.code);
    this.cause = reply.cause;
  }
}

/** Anything else than a reply envelope: an HTTP status neither service documents. */
export class UnexpectedReply extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`unexpected HTTP ${status}: ${JSON.stringify(body)}`);
    this.name = "UnexpectedReply";
  }
}

/** What `openapi-fetch` resolves to, reduced to what `outcome` reads. */
export interface Fetched<Reply> {
  data?: Reply;
  error?: unknown;
  response: Response;
}

/** The reply's `data` on success, or the business error. */
export type Outcome<Reply extends Envelope> =
  | { ok: true; data: Reply["data"]; reply: Reply }
  | { ok: false; error: BusinessError<Reply> };

/**
 * Reads a call's result as success or business error. Throws `UnexpectedReply` for a
 * status the specs do not document (the services answer 200 or 299 only).
 */
export async function outcome<Reply extends Envelope>(call: Promise<Fetched<Reply>>): Promise<Outcome<Reply>> {
  const { data, error, response } = await call;
  if ((response.status !== 200 && response.status !== 299) || data === undefined) {
    throw new UnexpectedReply(response.status, error ?? data);
  }
  if (response.status === 299 || data.code !== 0) {
    return { ok: false, error: new BusinessError(data, response.status) };
  }
  return { ok: true, data: data.data, reply: data };
}

/** The reply's `data`; a business exception is thrown as `BusinessError`. */
export async function unwrap<Reply extends Envelope>(call: Promise<Fetched<Reply>>): Promise<Reply["data"]> {
  const result = await outcome(call);
  if (!result.ok) {
    throw result.error;
  }
  return result.data;
}

/**
 * `Paths` without the `g_nonce` query parameter of every operation, which the clients
 * above add to each request. An operation left with no required query parameter takes
 * its `params.query` as optional.
 */
export type WithoutNonce<Paths> = {
  [Path in keyof Paths]: { [Method in keyof Paths[Path]]: DropNonce<Paths[Path][Method]> };
};

type DropNonce<Operation> = Operation extends { parameters: { query: infer Query } }
  ? Omit<Operation, "parameters"> & {
      parameters: Omit<Operation["parameters"], "query"> & QueryParameters<Omit<Query, "g_nonce">>;
    }
  : Operation;

type QueryParameters<Query> = keyof Query extends never
  ? { query?: never }
  : RequiredKeys<Query> extends never
    ? { query?: Query }
    : { query: Query };

type RequiredKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];
