// Drives the client's powers through `toolhost serve TOOLS_DIR` over stdio with the
// official MCP TypeScript SDK (`@modelcontextprotocol/sdk` 1.x), and prints what it saw
// as one JSON object; tests/e2e/client_powers.rs asserts on it.
//
//     node client_powers.mjs TOOLHOST_BIN TOOLS_DIR
//
// TOOLS_DIR holds the `conformance` toolbox, granted `elicit`, `sample` and `log`. One
// client declines every question, answers sampling and listens to log lines (at the
// default level, then at `warning`); another declares no capability.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const [bin, tools] = process.argv.slice(2);

function summary(result) {
  const blocks = result.content ?? [];
  return {
    is_error: result.isError === true,
    text: blocks.map((block) => block.text ?? "").join("\n"),
    types: blocks.map((block) => block.type),
  };
}

async function connect(capabilities) {
  const client = new Client({ name: "toolhost-tests", version: "0.0.0" }, { capabilities });
  await client.connect(new StdioClientTransport({ command: bin, args: ["serve", tools], stderr: "ignore" }));
  return client;
}

async function main() {
  const seen = { asked: [], sampled: [], logged: [] };
  const declining = await connect({ elicitation: {}, sampling: {} });
  declining.setRequestHandler(ElicitRequestSchema, async (request) => {
    seen.asked.push(request.params.message);
    return { action: "decline" };
  });
  declining.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    seen.sampled.push(request.params.messages[0].content.text);
    return { role: "assistant", content: { type: "text", text: "four" }, model: "test-model" };
  });
  declining.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    seen.logged.push(notification.params);
  });
  seen.declined = summary(await declining.callTool({ name: "conformance.test_elicitation", arguments: { message: "name?" } }));
  seen.sampled_result = summary(await declining.callTool({ name: "conformance.test_sampling", arguments: { prompt: "2+2?" } }));
  seen.mixed = summary(await declining.callTool({ name: "conformance.test_multiple_content_types", arguments: {} }));
  // At the default level the tool's info lines arrive, all before its result.
  await declining.callTool({ name: "conformance.test_tool_with_logging", arguments: {} });
  seen.lines_before_result = seen.logged.map((line) => line.data);
  await declining.setLoggingLevel("warning");
  seen.quiet = summary(await declining.callTool({ name: "conformance.test_tool_with_logging", arguments: {} }));
  await new Promise((resolve) => setTimeout(resolve, 300));
  seen.logged = seen.logged.slice(seen.lines_before_result.length);
  await declining.close();

  const plain = await connect({});
  seen.no_sampling = summary(await plain.callTool({ name: "conformance.test_sampling", arguments: { prompt: "?" } }));
  await plain.close();
  console.log(JSON.stringify(seen));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
