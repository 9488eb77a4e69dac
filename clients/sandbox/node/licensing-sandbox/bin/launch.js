// What `npx licensing-sim`, `npx licensing-proxy` and `npx licensing` run: the platform
// package's program of that name, with this process's arguments and streams, the signals
// this process gets passed on, and its exit status (or signal) as this process's own.
import { spawn } from "node:child_process";
import { binary } from "../index.js";

const FORWARDED = ["SIGINT", "SIGTERM", "SIGHUP"];

export function launch(name) {
  const child = spawn(binary(name), process.argv.slice(2), { stdio: "inherit" });
  for (const signal of FORWARDED) process.on(signal, () => child.kill(signal));
  child.on("error", (error) => {
    console.error(`${name}: ${error.message}`);
    process.exit(1);
  });
  child.on("exit", (code, signal) => {
    if (signal) {
      for (const s of FORWARDED) process.removeAllListeners(s);
      process.kill(process.pid, signal);
    }
    process.exit(code ?? 1);
  });
}
