// An editor for the e2e tests: the official ACP TypeScript client
// (@agentclientprotocol/sdk) driving `talaria acp`. It prints one JSON
// object per line on stdout for everything it sends and receives, in order.
//
// node acp_client.mjs TALARIA SCENARIO CWD [SESSION]
//   work: initialize, session/new, a prompt whose tool calls ask for
//         permission (allowed once; rejected for ./keep), then a prompt
//         cancelled mid-tool.
//   start: initialize, session/new, a prompt; it is killed while that runs.
//   load: initialize, session/load SESSION; waits for the turn's end.
//   picture: initialize, session/new, a prompt with a picture (base64 PNG
//         PICTURE, the last argument), then one whose image is no picture.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const [talaria, scenario, cwd, extra] = process.argv.slice(2);
const loadSession = extra;
const out = (o) => process.stdout.write(JSON.stringify(o) + "\n");

const child = spawn(talaria, ["acp"], { stdio: ["pipe", "pipe", "inherit"] });
out({ event: "spawned", pid: child.pid });
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

let watchers = [];
const waitUpdate = (pred) => new Promise((resolve) => watchers.push({ pred, resolve }));
const app = acp
  .client({ name: "talaria-e2e" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    out({ event: "update", session: params.sessionId, update: params.update });
    watchers = watchers.filter((w) => {
      if (w.pred(params.update)) {
        w.resolve(params.update);
        return false;
      }
      return true;
    });
  })
  .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
    out({ event: "permission", request: params });
    // The editor's person allows what is asked, except touching ./keep.
    const reject = (params.toolCall.title ?? "").includes("./keep");
    return { outcome: { outcome: "selected", optionId: reject ? "deny" : "once" } };
  });

const prompt = (ctx, sessionId, text) =>
  ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });

try {
  await app.connectWith(stream, async (ctx) => {
    const init = await ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: {},
    });
    out({ event: "response", method: "initialize", result: init });
    if (scenario === "load") {
      const ended = waitUpdate((u) => u.sessionUpdate === "agent_message_chunk" && u.content.text.includes("finished"));
      const res = await ctx.request(acp.methods.agent.session.load, { sessionId: loadSession, cwd, mcpServers: [] });
      out({ event: "response", method: "session/load", result: res ?? null });
      await ended;
      out({ event: "done" });
      return;
    }
    const s = await ctx.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
    out({ event: "response", method: "session/new", result: s });
    if (scenario === "picture") {
      const image = { type: "image", data: extra, mimeType: "image/png", uri: "file:///tmp/red-dot.png" };
      const res = await ctx.request(acp.methods.agent.session.prompt, {
        sessionId: s.sessionId,
        prompt: [{ type: "text", text: "what is this?" }, image],
      });
      out({ event: "response", method: "session/prompt", result: res });
      try {
        const notPicture = { type: "image", data: Buffer.from("#!/bin/sh\necho hi\n").toString("base64"), mimeType: "image/png" };
        await ctx.request(acp.methods.agent.session.prompt, { sessionId: s.sessionId, prompt: [notPicture] });
        out({ event: "accepted" });
      } catch (err) {
        out({ event: "refused", code: err?.code ?? null, message: String(err?.message ?? err), data: err?.data ?? null });
      }
      out({ event: "done" });
      return;
    }
    if (scenario === "start") {
      await prompt(ctx, s.sessionId, "start the long job");
      return;
    }
    const first = await prompt(ctx, s.sessionId, "clean up the scratch directory");
    out({ event: "response", method: "session/prompt", result: first });
    const sleeping = waitUpdate((u) => u.sessionUpdate === "tool_call" && (u.title ?? "").includes("sleep"));
    const second = prompt(ctx, s.sessionId, "wait a long time");
    const call = await sleeping;
    out({ event: "cancel", toolCallId: call.toolCallId });
    await ctx.notify(acp.methods.agent.session.cancel, { sessionId: s.sessionId });
    out({ event: "response", method: "session/prompt", result: await second });
    out({ event: "done" });
  });
} catch (err) {
  out({ event: "error", message: String(err?.message ?? err), data: err?.data ?? null });
}
child.kill();
