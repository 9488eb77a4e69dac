// The package's types as a TypeScript partner meets them: `cargo xtask dist --check`
// compiles this file (`tsc --noEmit --strict`, the clients' pinned tsc) in the fresh npm
// project, so that index.d.ts resolves the admin API's generated types from
// licensing-client and they are not `any` (each @ts-expect-error must meet its error).

import { type Clock, type FaultRule, type JournalPage, type Sandbox, startSandbox } from "licensing-sandbox";

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
