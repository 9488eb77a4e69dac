// The tests' MCP client: the official TypeScript SDK's Client, run through a plan, as
// client.py does for the Python SDK (the same plan on stdin, the same JSON on stdout).

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const plan = JSON.parse(Buffer.concat(chunks).toString("utf8"));

const answer = plan.elicitation;
const asked = [];
const client = new Client(
  { name: "licensing-tests", version: "1.0.0" },
  { capabilities: answer ? { elicitation: {} } : {} },
);
if (answer) {
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params.message);
    if (answer === "wait") await new Promise((resolve) => setTimeout(resolve, 3_600_000));
    return answer === "accept" ? { action: "accept", content: {} } : { action: answer };
  });
}

const transport = plan.http
  ? new StreamableHTTPClientTransport(new URL(plan.http.url), {
      requestInit: { headers: plan.http.headers ?? {} },
    })
  : new StdioClientTransport({
      command: plan.stdio.command,
      args: plan.stdio.args,
      env: plan.stdio.env,
      stderr: "inherit",
    });
await client.connect(transport);

const steps = [];
for (const step of plan.steps) {
  try {
    if (step.do === "list") {
      const { tools } = await client.listTools();
      steps.push(tools.map((t) => ({
        name: t.name,
        description: t.description,
        annotations: t.annotations ?? null,
        inputSchema: t.inputSchema,
        outputSchema: t.outputSchema ?? null,
      })));
    } else {
      const r = await client.callTool({ name: step.tool, arguments: step.args ?? {} });
      steps.push({
        isError: Boolean(r.isError),
        structured: r.structuredContent ?? null,
        text: r.content.filter((c) => c.type === "text").map((c) => c.text),
      });
    }
  } catch (e) {
    steps.push({ exception: String(e) });
  }
}
const protocol = client.getServerVersion() ? transport.protocolVersion ?? null : null;
await client.close();
process.stdout.write(JSON.stringify({ protocol, steps, asked }));
// A confirmation left waiting keeps a timer alive: the run is over.
process.exit(0);
