// The package's types as a TypeScript partner meets them: `cargo xtask dist --check`
// compiles this file (`tsc --noEmit --strict`, the clients' pinned tsc) in the fresh npm
// project, so that index.d.ts resolves the admin API's generated types from
// licensing-client, and neither they nor the services' client are `any` (each
// `@ts-expect-error` below must meet its error).

import { BusinessError, orderClient, outcome, unwrap } from "licensing-client";
import {
  type Clock,
  type FaultRule,
  type JournalPage,
  type Sandbox,
  type Tenant,
  connectSandbox,
  startSandbox,
} from "licensing-sandbox";

export async function story(): Promise<number> {
  const sandbox: Sandbox = await startSandbox({ seed: "demo", trialMemberLimit: 5 });
  const clock: Clock = await sandbox.advanceClock({ days: 1 });
  const rule: FaultRule = await sandbox.addFault("batchOrder", { kind: "code", code: "500" }, { times: 1 });
  const page: JournalPage = await sandbox.journal({ operation: "batchOrder", limit: 10 });
  // @ts-expect-error: the clock's time is a number of milliseconds
  const wrong: string = clock.now;
  // @ts-expect-error: no such fault kind in the admin API's document
  await sandbox.addFault("batchOrder", { kind: "no-such-kind" });
  await sandbox.stop();
  return clock.now + rule.id + page.entries.length + wrong.length;
}

// A tenant of a shared sandbox: its tokens are strings, its admin operations the same.
export async function tenant(url: string): Promise<number> {
  const shared: Sandbox = await connectSandbox(url, { adminToken: "token" });
  const own: Tenant = await shared.tenant({ name: "worker-3", seed: "demo", ttl: 600 });
  const app: string = own.tokens.app;
  const clock: Clock = await own.advanceClock({ days: 1 });
  // @ts-expect-error: no such region in the admin API's document
  await shared.tenant({ region: "mars" });
  await own.delete();
  return app.length + clock.now + (shared.pid ?? 0);
}

// The generated client's types, as the story's calls meet them: its paths and bodies are the
// order service's document's, and a business error is typed with its code and cause.
export async function numbers(url: string): Promise<number> {
  const order = orderClient(url, "app-token");
  const allocated = await unwrap(order.POST("/order/api/order/v1/shellnums", { body: { size: 3 } }));
  // @ts-expect-error: the shell numbers are strings of digits
  const first: number = allocated?.[0] ?? 0;
  // @ts-expect-error: the size is a number of shell numbers
  await order.POST("/order/api/order/v1/shellnums", { body: { size: "3" } });
  // @ts-expect-error: no such path in the order service's document
  await order.POST("/order/api/order/v1/no-such-path", { body: { size: 1 } });
  const result = await outcome(order.POST("/order/api/order/v1/shellnums", { body: { size: 1 } }));
  const refused: BusinessError | undefined = result.ok ? undefined : result.error;
  const code: string = refused?.code ?? "";
  return (allocated?.length ?? 0) + first + code.length + (refused?.cause?.length ?? 0);
}
