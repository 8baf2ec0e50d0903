/**
 * The scripted provider's state: the script (a file, read once, or inline replies), steps pushed by
 * tests, the requests received, and which reply comes next for the main conversation and each keyed
 * one. The plugin's setup only registers the provider and the `scripted` service built here.
 */
import { appendFileSync } from "node:fs";
import { resolve } from "node:path";
import {
  CoilError,
  messageOf,
  type ModelInfo,
  type PluginContext,
  type Provider,
  type ProviderEvent,
  type ProviderRequest,
  type Static,
} from "../../api/index.js";
import type { ScriptedOptions, ScriptedService } from "./index.js";
import {
  checkConversations,
  checkReplies,
  readScript,
  streamReply,
  type ScriptedReply,
  type ScriptStep,
} from "./script.js";

export class ScriptedProvider {
  readonly requests: ProviderRequest[] = [];
  private readonly pushed: ScriptStep[] = [];
  private loaded: { steps: ScriptStep[]; conversations: Record<string, ScriptedReply[]>; where: string } | undefined;
  /** Requests received (call ids count them), and those of the main conversation (they index `steps`). */
  private next = 0;
  private mainNext = 0;
  private readonly conversationNext = new Map<string, number>();
  private readonly o: Static<typeof ScriptedOptions>;

  constructor(private readonly ctx: PluginContext<Static<typeof ScriptedOptions>>) {
    this.o = ctx.options;
  }

  /** Replies to check before the run starts (a script file, inline ones): a bad script is a configuration error (exit 2), not a failed run. */
  hasScript(): boolean {
    return Boolean(this.scriptFile() || this.o.replies || this.o.conversations);
  }

  /** `--script`, else the `script` option; undefined for inline replies. */
  scriptFile(): string | undefined {
    const flag = this.ctx.flags.get("script");
    if (typeof flag === "string" && flag) return resolve(this.ctx.cwd, flag);
    return this.o.script ? resolve(this.ctx.baseDir, this.o.script) : undefined;
  }

  async load(): Promise<{ steps: ScriptStep[]; conversations: Record<string, ScriptedReply[]>; where: string }> {
    if (this.loaded) return this.loaded;
    const o = this.o;
    const file = this.scriptFile();
    if (file) {
      const script = await readScript(file);
      this.loaded = { steps: script.replies, conversations: script.conversations, where: file };
    } else {
      const inline = o.replies || o.conversations;
      this.loaded = {
        steps: o.replies ? await checkReplies(o.replies, "the inline replies") : [],
        conversations: await checkConversations({ conversations: o.conversations }, "the inline replies"),
        where: inline ? "the inline replies" : "the script",
      };
    }
    return this.loaded;
  }

  provider(): Provider {
    const o = this.o;
    const model: ModelInfo = {
      id: o.model,
      provider: "scripted",
      name: "Scripted replies",
      contextWindow: o.contextWindow,
      maxOutput: o.maxOutput,
      input: ["text", "image"],
    };
    return {
      id: "scripted",
      models: [model],
      resolveModel: (id) => ({ ...model, id }),
      isConfigured: () =>
        Boolean(
          this.scriptFile() || o.replies?.length || Object.keys(o.conversations ?? {}).length || this.pushed.length,
        ),
      setupHint: "--provider scripted --script replies.yaml  (replays scripted replies; see docs/scripted-provider.md)",
      stream: (request, signal) => this.stream(request, signal),
    };
  }

  /** The next reply: the keyed conversation's whose key starts the first user message, else the main script's. */
  async *stream(request: ProviderRequest, signal: AbortSignal): AsyncGenerator<ProviderEvent> {
    const index = this.next++;
    this.requests.push(request);
    const fail = (text: string): ProviderEvent => ({
      type: "error",
      message: {
        role: "assistant",
        content: [],
        provider: "scripted",
        model: request.model.id,
        usage: {
          input: 0,
          output: 0,
          cacheRead: 0,
          cacheWrite: 0,
          cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
        },
        stopReason: "error",
        errorMessage: text,
        timestamp: Date.now(),
      },
    });
    try {
      if (this.o.recordTo) appendFileSync(resolve(this.ctx.baseDir, this.o.recordTo), JSON.stringify(request) + "\n");
      const { steps, conversations, where } = await this.load();
      const first = request.messages.find((m) => m.role === "user");
      const opening =
        typeof first?.content === "string"
          ? first.content
          : (first?.content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("");
      const key = Object.keys(conversations)
        .filter((k) => opening.startsWith(k))
        .sort((a, b) => b.length - a.length)[0];
      let reply: ScriptedReply;
      if (key !== undefined) {
        const n = this.conversationNext.get(key) ?? 0;
        this.conversationNext.set(key, n + 1);
        const list = conversations[key]!;
        if (n >= list.length)
          return yield fail(
            `script exhausted: conversation '${key}' asked for reply ${n + 1}, but ${where} has ${list.length} for it`,
          );
        reply = list[n]!;
      } else {
        const at = this.mainNext++;
        const step = at < steps.length ? steps[at] : this.pushed[at - steps.length];
        if (step === undefined) {
          const count = steps.length + this.pushed.length;
          return yield fail(
            `script exhausted: request ${at + 1} asked for a reply, but ${where} has ${count} ${count === 1 ? "reply" : "replies"}`,
          );
        }
        reply =
          typeof step === "function" ? (await checkReplies([await step(request, at)], `step ${at + 1}`))[0]! : step;
      }
      yield* streamReply(
        reply,
        { provider: "scripted", model: request.model.id, callPrefix: `call_${index + 1}`, chunkSize: this.o.chunkSize },
        signal,
      );
    } catch (cause) {
      yield fail(cause instanceof CoilError ? cause.message : `[plugin provider-scripted] ${messageOf(cause)}`);
    }
  }

  service(): ScriptedService {
    return {
      requests: this.requests,
      push: (...steps) => void this.pushed.push(...steps),
      remaining: () =>
        Math.max(
          0,
          (this.loaded ? this.loaded.steps.length : (this.o.replies?.length ?? 0)) + this.pushed.length - this.mainNext,
        ) +
        Object.entries(this.loaded?.conversations ?? {}).reduce(
          (sum, [k, list]) => sum + Math.max(0, list.length - (this.conversationNext.get(k) ?? 0)),
          0,
        ),
    };
  }
}
