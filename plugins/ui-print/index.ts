/**
 * ui-print: the non-interactive front end. `coil -p "prompt"` prints the final assistant text;
 * `--mode json` writes every event as one JSON line (docs/json-mode.md).
 * Exit codes (exitCodeFor): 0 success, 1 when the run ends in error or abort, 3 when a stop rule halted it.
 */
import {
  definePlugin,
  lastAssistantText,
  type PluginContext,
  type PromptInput,
  type AgentEvent,
  type FrontEndContext,
  type ImageContent,
  type TextContent,
  type UserMessage,
} from "../../api/index.js";
import { resolve } from "node:path";
import { imageAttachment } from "../../lib/attachments.js";
import { exitCodeFor, filterInput, findCommand, formatDiagnostic } from "../../lib/front-end.js";
import { onTermination } from "../../lib/signals.js";

/** `--image a.png,b.jpg`: the prompt as a user message with those images after its text, or why not. */
function withImages(spec: unknown, ctx: FrontEndContext, text: string): { input: PromptInput } | { error: string } {
  if (typeof spec !== "string" || !spec.trim()) return { input: text };
  const content: (TextContent | ImageContent)[] = [{ type: "text", text }];
  for (const file of spec
    .split(",")
    .map((f) => f.trim())
    .filter(Boolean)) {
    const attached = imageAttachment(resolve(ctx.cwd, file), file, ctx.agent.state.model);
    if (!attached.ok) return { error: `--image: ${attached.problem}` };
    content.push(...attached.blocks);
  }
  const message: UserMessage = { role: "user", content, timestamp: Date.now() };
  return { input: message };
}

function write(stream: NodeJS.WritableStream, text: string): Promise<void> {
  return new Promise((resolve) => {
    if (stream.write(text)) return resolve();
    stream.once("drain", () => resolve());
    stream.once("error", () => resolve());
  });
}

async function run(plugin: PluginContext, ctx: FrontEndContext): Promise<number> {
  const { agent, mode, stdout, stderr } = ctx;
  if (!ctx.prompt) {
    stderr.write('coil: print mode needs a prompt: coil -p "what to do" (or pipe it on stdin)\n');
    return 2;
  }
  const json = mode === "json";
  const shown = new Set<string>();
  const unsubscribe = agent.subscribe((event: AgentEvent) => {
    if (pipeClosed) return;
    if (json) stdout.write(JSON.stringify(event) + "\n");
    else if (event.type === "diagnostic" && event.level !== "info") {
      shown.add(event.message);
      stderr.write(`coil: ${formatDiagnostic(event)}\n`);
    } else if (event.type === "retry")
      stderr.write(
        `coil: retrying in ${Math.round(event.delayMs / 1000)}s (attempt ${event.attempt}): ${event.reason}\n`,
      );
  });
  const onSignal = () => agent.abort();
  // A closed pipe (`coil --mode json ... | head`): the reader has what it wanted; the run ends quietly, exit 0.
  let pipeClosed = false;
  const onPipeError = (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") return;
    pipeClosed = true;
    agent.abort();
  };
  stdout.on("error", onPipeError);
  // Ctrl-C, kill, a closed terminal or ssh session, a CI cancel: abort, so every command's process tree ends.
  // once each: a second Ctrl-C still ends coil at once (the process groups end with it).
  const offSignals = onTermination(onSignal);
  try {
    // `/name args` runs a registered slash command (not after `--`); text it returns is printed, a prompt it returns is sent.
    let input: PromptInput = ctx.prompt;
    const slash = ctx.literal ? undefined : findCommand(agent.view, ctx.prompt);
    if (slash) {
      const out = await slash.command.run(slash.args, agent);
      if (out === undefined || typeof out === "string") {
        if (out) await write(json ? stderr : stdout, out.endsWith("\n") ? out : out + "\n");
        return 0;
      }
      input = out.prompt;
    } else {
      // A plugin's `input` service (Pi extensions' input event) may rewrite the prompt, or consume it: no run.
      const verdict = await filterInput(plugin.services.get("input"), ctx.prompt, "interactive");
      if ("handled" in verdict) {
        if (verdict.output)
          await write(json ? stderr : stdout, verdict.output.endsWith("\n") ? verdict.output : verdict.output + "\n");
        return 0;
      }
      input = verdict.text;
    }
    if (typeof input === "string") {
      const attached = withImages(plugin.flags.get("image"), ctx, input);
      if ("error" in attached) {
        stderr.write(`coil: ${attached.error}\n`);
        return 2;
      }
      input = attached.input;
    }
    const result = await agent.prompt(input);
    if (pipeClosed) return 0;
    if (!json) {
      const text = lastAssistantText(result.messages);
      if (text) await write(stdout, text.endsWith("\n") ? text : text + "\n");
      if (result.reason) stderr.write(`coil: stopped: ${result.reason}\n`);
      if (result.stopReason === "error" && !shown.has(result.error ?? ""))
        stderr.write(`coil: error: ${result.error ?? "the run failed"}\n`);
      if (result.stopReason === "aborted") stderr.write("coil: aborted\n");
    }
    return exitCodeFor(result.stopReason);
  } finally {
    unsubscribe();
    stdout.off("error", onPipeError);
    offSignals();
  }
}

export default definePlugin({
  id: "ui-print",
  description: "Print mode: final text (-p) or a JSON event stream (--mode json)",
  setup(ctx) {
    ctx.flags.register({
      name: "image",
      description: "attach image files to the -p prompt (PNG, JPEG, GIF, WebP; comma-separated)",
      type: "string",
      valueName: "file",
    });
    ctx.frontEnds.register({ id: "print", modes: ["text", "json"], run: (fe) => run(ctx, fe) });
  },
});
