// Drives `toolhost serve` with the official MCP TypeScript SDK (`@modelcontextprotocol/sdk`
// 1.x) and prints what it saw as one JSON object on stdout; tests/e2e/mcp.rs asserts on it.
//
//     node client.mjs stdio TOOLHOST_BIN TOOLS_DIR
//     node client.mjs http  URL
//
// With TOOLHOST_CALLS set to a JSON list of `{"name": ..., "arguments": ...}`, it makes
// those calls instead of its own and prints `{"tools": [names], "results": [...]}`.
//
// The SDK validates every message with its own schemas: `listTools()` rejects the whole
// list if one tool's definition breaks them, and `callTool()` checks structured content
// against the tool's `outputSchema`.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [mode, ...rest] = process.argv.slice(2);

function transport() {
  if (mode === "stdio") {
    const [bin, tools] = rest;
    return new StdioClientTransport({ command: bin, args: ["serve", tools], stderr: "ignore" });
  }
  if (mode === "http") {
    return new StreamableHTTPClientTransport(new URL(rest[0]));
  }
  throw new Error(`unknown mode ${mode}`);
}

function summary(result) {
  return {
    is_error: result.isError === true,
    structured: result.structuredContent ?? null,
    text: (result.content ?? []).map((block) => block.text ?? "").join("\n"),
  };
}

async function calls(client, list) {
  const listed = await client.listTools();
  const results = [];
  for (const call of list) {
    results.push(summary(await client.callTool(call)));
  }
  const seen = { tools: listed.tools.map((tool) => tool.name), results };
  if (process.env.TOOLHOST_AWAIT_LIST_CHANGED) {
    // Tell the test we are listening, wait for the server's notification, list again.
    const changed = new Promise((resolve) =>
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()),
    );
    process.stderr.write("listening\n");
    await changed;
    seen.tools_after_change = (await client.listTools()).tools.map((tool) => tool.name);
  }
  return seen;
}

async function main() {
  const client = new Client({ name: "toolhost-tests", version: "0.0.0" });
  await client.connect(transport());
  if (process.env.TOOLHOST_CALLS) {
    const seen = await calls(client, JSON.parse(process.env.TOOLHOST_CALLS));
    await client.close();
    process.stdout.write(JSON.stringify(seen) + "\n");
    return;
  }
  const seen = { mode, server: client.getServerVersion(), tools: {} };
  const listed = await client.listTools();
  for (const tool of listed.tools) {
    seen.tools[tool.name] = { title: tool.title, input_schema: tool.inputSchema, has_output_schema: !!tool.outputSchema };
  }
  seen.add = summary(await client.callTool({ name: "math.add", arguments: { numbers: [1, 2, 3] } }));
  seen.get = summary(
    await client.callTool({ name: "json.get", arguments: { document: { a: [10, 20] }, pointer: "/a/1" } }),
  );
  seen.shout = summary(await client.callTool({ name: "shapes.shout", arguments: { input: "quiet" } }));
  seen.divide_by_zero = summary(await client.callTool({ name: "math.divide", arguments: { dividend: 1, divisor: 0 } }));
  await client.close();
  process.stdout.write(JSON.stringify(seen) + "\n");
}

const timer = setTimeout(() => {
  process.stderr.write("client.mjs: no answer within 120 s\n");
  process.exit(2);
}, 120_000);
main()
  .then(() => {
    clearTimeout(timer);
    process.exit(0);
  })
  .catch((error) => {
    process.stderr.write(`client.mjs: ${error?.stack ?? error}\n`);
    process.exit(1);
  });
