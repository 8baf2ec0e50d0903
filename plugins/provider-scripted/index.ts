/**
 * provider-scripted: replays a script of replies and records every request it receives.
 * For tests, demos and plugin authors: `coil --provider scripted --script replies.yaml -p "..."`.
 */
import { appendFileSync } from "node:fs";
import { resolve } from "node:path";
import { Type } from "typebox";
import { CoilError, definePlugin, messageOf, type ModelInfo, type Provider, type ProviderEvent, type ProviderRequest } from "../../kernel/index.js";
import { checkConversations, checkReplies, readScript, streamReply, type ScriptedReply, type ScriptStep } from "./script.js";

export const ScriptedOptions = Type.Object({
  /** A YAML or JSON file of replies, relative to the preset file. `--script` overrides it. */
  script: Type.Optional(Type.String()),
  /** Inline replies (same shape as the file). */
  replies: Type.Optional(Type.Array(Type.Unknown())),
  /** Inline replies per conversation, keyed by the start of its first user message (as in a script file). */
  conversations: Type.Optional(Type.Record(Type.String(), Type.Array(Type.Unknown()))),
  /** Append every request as one JSON line to this file. */
  recordTo: Type.Optional(Type.String()),
  /** Characters per streamed delta. */
  chunkSize: Type.Integer({ minimum: 1, default: 16 }),
  model: Type.String({ default: "scripted" }),
  contextWindow: Type.Integer({ minimum: 1, default: 200_000 }),
  maxOutput: Type.Integer({ minimum: 1, default: 32_000 }),
});

/** The `scripted` service: what tests and plugins use to script and inspect the fake model. */
export interface ScriptedService {
  /** Every request received, in order. */
  readonly requests: ProviderRequest[];
  /** Add steps at the end of the script. */
  push(...steps: ScriptStep[]): void;
  /** Steps not yet replayed. */
  remaining(): number;
}

declare module "coil" {
  interface Services {
    scripted: ScriptedService;
  }
}

export default definePlugin({
  id: "provider-scripted",
  description: "A provider that replays scripted replies (tests, demos, plugin development)",
  options: ScriptedOptions,
  setup(ctx) {
    const o = ctx.options;
    ctx.flags.register({ name: "script", description: "replies file for the scripted provider (YAML or JSON)", type: "string", valueName: "file" });

    const requests: ProviderRequest[] = [];
    const pushed: ScriptStep[] = [];
    let loaded: { steps: ScriptStep[]; conversations: Record<string, ScriptedReply[]>; where: string } | undefined;
    /** Requests received (call ids count them), and those of the main conversation (they index `steps`). */
    let next = 0;
    let mainNext = 0;
    const conversationNext = new Map<string, number>();

    const scriptFile = (): string | undefined => {
      const flag = ctx.flags.get("script");
      if (typeof flag === "string" && flag) return resolve(ctx.cwd, flag);
      return o.script ? resolve(ctx.baseDir, o.script) : undefined;
    };
    const load = async () => {
      if (loaded) return loaded;
      const file = scriptFile();
      if (file) {
        const script = await readScript(file);
        loaded = { steps: script.replies, conversations: script.conversations, where: file };
      } else {
        const inline = o.replies || o.conversations;
        loaded = { steps: o.replies ? checkReplies(o.replies, "the inline replies") : [], conversations: checkConversations({ conversations: o.conversations }, "the inline replies"), where: inline ? "the inline replies" : "the script" };
      }
      return loaded;
    };

    // Inline replies are checked now, a script file before the run starts: a bad script is a
    // configuration error (exit 2), not a failed run.
    if (o.replies) checkReplies(o.replies, "the inline replies");
    if (o.conversations) checkConversations({ conversations: o.conversations }, "the inline replies");
    ctx.onStart(async () => {
      if (scriptFile()) await load();
    });

    const model: ModelInfo = { id: o.model, provider: "scripted", name: "Scripted replies", contextWindow: o.contextWindow, maxOutput: o.maxOutput, input: ["text", "image"] };
    const provider: Provider = {
      id: "scripted",
      models: [model],
      resolveModel: (id) => ({ ...model, id }),
      isConfigured: () => Boolean(scriptFile() || o.replies?.length || Object.keys(o.conversations ?? {}).length || pushed.length),
      setupHint: "--provider scripted --script replies.yaml  (replays scripted replies; see docs/scripted-provider.md)",
      async *stream(request, signal): AsyncGenerator<ProviderEvent> {
        const index = next++;
        requests.push(request);
        const fail = (text: string): ProviderEvent => ({
          type: "error",
          message: { role: "assistant", content: [], provider: "scripted", model: request.model.id, usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "error", errorMessage: text, timestamp: Date.now() },
        });
        try {
          if (o.recordTo) appendFileSync(resolve(ctx.baseDir, o.recordTo), JSON.stringify(request) + "\n");
          const { steps, conversations, where } = await load();
          const first = request.messages.find((m) => m.role === "user");
          const opening = typeof first?.content === "string" ? first.content : (first?.content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("");
          const key = Object.keys(conversations).filter((k) => opening.startsWith(k)).sort((a, b) => b.length - a.length)[0];
          let reply: ScriptedReply;
          if (key !== undefined) {
            const n = conversationNext.get(key) ?? 0;
            conversationNext.set(key, n + 1);
            const list = conversations[key]!;
            if (n >= list.length) return yield fail(`script exhausted: conversation '${key}' asked for reply ${n + 1}, but ${where} has ${list.length} for it`);
            reply = list[n]!;
          } else {
            const at = mainNext++;
            const step = at < steps.length ? steps[at] : pushed[at - steps.length];
            if (step === undefined) {
              const count = steps.length + pushed.length;
              return yield fail(`script exhausted: request ${at + 1} asked for a reply, but ${where} has ${count} ${count === 1 ? "reply" : "replies"}`);
            }
            reply = typeof step === "function" ? checkReplies([await step(request, at)], `step ${at + 1}`)[0]! : step;
          }
          yield* streamReply(reply, { provider: "scripted", model: request.model.id, callPrefix: `call_${index + 1}`, chunkSize: o.chunkSize }, signal);
        } catch (cause) {
          yield fail(cause instanceof CoilError ? cause.message : `[plugin provider-scripted] ${messageOf(cause)}`);
        }
      },
    };
    ctx.providers.register(provider);
    ctx.services.provide("scripted", {
      requests,
      push: (...steps) => void pushed.push(...steps),
      remaining: () =>
        Math.max(0, (loaded ? loaded.steps.length : (o.replies?.length ?? 0)) + pushed.length - mainNext) +
        Object.entries(loaded?.conversations ?? {}).reduce((sum, [k, list]) => sum + Math.max(0, list.length - (conversationNext.get(k) ?? 0)), 0),
    } satisfies ScriptedService);
  },
});
