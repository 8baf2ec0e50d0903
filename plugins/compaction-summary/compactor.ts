/**
 * The summary compaction: plan the cut, have a model summarise the older part, record the result in
 * the session. The plugin's setup only registers these methods at the `compact` hook and `/compact`.
 */
import {
  DEFAULT_RESERVE_TOKENS,
  compactionLimit,
  estimateMessageTokens,
  messageOf,
  type Agent,
  type AgentMessage,
  type AssistantMessage,
  type CompactRequest,
  type CompactResult,
  type ModelInfo,
  type PluginContext,
  type Provider,
  type Static,
} from "../../api/index.js";
import type {} from "../session-jsonl/api.js"; // types the `session` service
import { planCut } from "./cut.js";
import type { CompactionDetails, CompactionOptions } from "./index.js";
import {
  SUMMARISER_SYSTEM,
  filesTouched,
  mergeFiles,
  parseSummary,
  serialize,
  summaryMessage,
  summaryPrompt,
  turnPrefixPrompt,
} from "./summary.js";

const tokensOf = (messages: readonly AgentMessage[]) => messages.reduce((n, m) => n + estimateMessageTokens(m), 0);
const fmt = (n: number) => n.toLocaleString("en-US");

export class Compactor {
  agent: Agent | undefined;
  /** Why the last attempt did not compact, for /compact to show. */
  private lastFailure: string | undefined;
  private readonly o: Static<typeof CompactionOptions>;

  constructor(private readonly ctx: PluginContext<Static<typeof CompactionOptions>>) {
    this.o = ctx.options;
  }

  private fail(level: "warn" | "error", why: string): undefined {
    this.lastFailure = why;
    this.ctx.log[level](why);
    return undefined;
  }

  private target(model: ModelInfo): { provider: Provider; model: ModelInfo } {
    if (!this.o.model) {
      const provider = this.ctx.providers.get(model.provider);
      if (!provider) throw new Error(`provider '${model.provider}' of the session's model is not registered`);
      return { provider, model };
    }
    const [pid, ...rest] = this.o.model.split("/");
    const id = rest.join("/");
    const provider = this.ctx.providers.get(pid!);
    if (!provider || !id)
      throw new Error(
        `the 'model' option '${this.o.model}' must be provider/model with a registered provider (registered: ${this.ctx.providers.ids().join(", ")})`,
      );
    const found = provider.models?.find((m) => m.id === id) ?? provider.resolveModel?.(id);
    if (!found) throw new Error(`provider '${pid}' has no model '${id}' (the 'model' option)`);
    return { provider, model: found };
  }

  /** Output tokens a summary may use: the option, within the summarising model's output limit. */
  private summaryLimit(m: ModelInfo): number {
    return Math.min(m.maxOutput || this.o.maxSummaryTokens, this.o.maxSummaryTokens);
  }

  /** One summariser call; resolves to the text, rejects with the reason. */
  async complete(
    t: { provider: Provider; model: ModelInfo },
    prompt: string,
    signal: AbortSignal,
    maxTokens = this.summaryLimit(t.model),
  ): Promise<string> {
    let final: AssistantMessage | undefined;
    const stream = t.provider.stream(
      {
        model: t.model,
        system: [{ id: "compaction-summary", text: SUMMARISER_SYSTEM }],
        messages: [{ role: "user", content: prompt, timestamp: Date.now() }],
        tools: [],
        options: { maxTokens, thinking: "off" },
      },
      signal,
    );
    for await (const event of stream) {
      if (event.type === "done" || event.type === "error") {
        final = event.message;
        break;
      }
    }
    if (!final) throw new Error("the provider ended its stream without a reply");
    if (final.stopReason === "error" || final.stopReason === "aborted")
      throw new Error(final.errorMessage ?? final.stopReason);
    const text = final.content
      .map((c) => (c.type === "text" ? c.text : ""))
      .join("")
      .trim();
    if (!text) throw new Error("the summary came back empty");
    return text;
  }

  /** Characters of conversation that fit the summariser's window next to its output. */
  budget(m: ModelInfo): number {
    return Math.max(8_000, (m.contextWindow - Math.min(m.maxOutput, this.o.maxSummaryTokens) - 2_000) * 3);
  }

  async compact(req: CompactRequest): Promise<CompactResult | undefined> {
    this.lastFailure = undefined;
    const level = req.reason === "threshold" ? "warn" : "error";
    let t: { provider: Provider; model: ModelInfo };
    try {
      t = this.target(req.model);
    } catch (error) {
      return this.fail("error", `compaction failed, the context is unchanged: ${messageOf(error)}`);
    }
    const prev = parseSummary(req.messages[0]);
    const body = prev ? req.messages.slice(1) : req.messages;
    // The summary and the kept messages must fit under the target: the summary gets at most half of it,
    // the kept part what is left (kept whole turns included), and keepRecentTokens at most half of that.
    const goal = req.targetTokens ?? compactionLimit(req.contextWindow, DEFAULT_RESERVE_TOKENS);
    const summaryTokens = Math.max(256, Math.min(this.summaryLimit(t.model), Math.floor(goal / 2)));
    const maxKeep = Math.max(0, goal - summaryTokens);
    const keep = Math.min(this.o.keepRecentTokens, Math.floor(req.contextWindow / 4), Math.floor(maxKeep / 2));
    const plan = planCut(body, keep, maxKeep);
    if (!plan)
      return this.fail(
        "warn",
        `nothing to compact: the context (${fmt(req.tokens)} tokens) has no earlier part that can be summarised`,
      );
    const chars = this.budget(t.model);
    let main: string;
    let prefix: string | undefined;
    try {
      [main, prefix] = await Promise.all([
        plan.history.length > 0
          ? this.complete(
              t,
              summaryPrompt({
                conversation: serialize(plan.history, chars),
                previous: prev?.summary,
                instructions: req.instructions,
              }),
              req.signal,
              summaryTokens,
            )
          : Promise.resolve(prev?.summary ?? ""),
        plan.turnPrefix.length > 0
          ? this.complete(t, turnPrefixPrompt(serialize(plan.turnPrefix, chars)), req.signal, summaryTokens)
          : Promise.resolve(undefined),
      ]);
    } catch (error) {
      return this.fail(
        "error",
        `compaction failed, the context is unchanged: summarising with ${t.model.provider}/${t.model.id} failed: ${messageOf(error)}`,
      );
    }
    const summary = [main.trim(), prefix ? `## Current turn (its early part, summarised)\n\n${prefix.trim()}` : ""]
      .filter(Boolean)
      .join("\n\n");
    const files = mergeFiles(prev, filesTouched([...plan.history, ...plan.turnPrefix]));
    const message = summaryMessage({ summary, ...files });
    const messages = [message, ...plan.kept];
    const tokensBefore = tokensOf(req.messages);
    const tokensAfter = tokensOf(messages);
    if (tokensAfter >= tokensBefore) {
      return this.fail(
        level,
        `compaction would not shrink the context (${fmt(tokensBefore)} → ${fmt(tokensAfter)} tokens), the context is unchanged: the summary is larger than the ${plan.history.length + plan.turnPrefix.length} messages it would replace`,
      );
    }
    const details: CompactionDetails = {
      summary,
      ...files,
      tokensBefore,
      tokensAfter,
      summarised: plan.history.length + plan.turnPrefix.length,
      kept: plan.kept.length,
      splitTurn: plan.turnPrefix.length > 0,
      model: `${t.model.provider}/${t.model.id}`,
    };
    this.record(req, message, plan.kept, details);
    return { messages, tokensAfter, details };
  }

  /** Store the compaction as a session entry: the summary plus "keep from entry X" when the kept part is the session's tail. */
  private record(
    req: CompactRequest,
    message: AgentMessage,
    kept: readonly AgentMessage[],
    details: CompactionDetails,
  ): void {
    const session = this.ctx.services.get("session");
    // Only the main agent's context is recorded (not a child agent's, not a request another plugin made up).
    const live = this.agent?.state.messages;
    if (!session || !live || req.agent.depth > 0) return;
    if (live.length !== req.messages.length || live.some((m, i) => m !== req.messages[i])) return;
    try {
      const now = session.context();
      const at = now.length - kept.length;
      const first = kept[0] && session.entryIdOf(kept[0]);
      const tail = first !== undefined && at >= 0 && kept.every((m, i) => now[at + i] === m);
      const { summary, readFiles, modifiedFiles } = details;
      session.appendCompaction({
        summary,
        messages: tail ? [message] : [message, ...kept],
        firstKeptEntryId: tail ? first : undefined,
        tokensBefore: details.tokensBefore,
        tokensAfter: details.tokensAfter,
        by: this.ctx.id,
        details: { readFiles, modifiedFiles, splitTurn: details.splitTurn, model: details.model },
      });
    } catch (error) {
      // The session plugin records it from the compaction event instead.
      this.ctx.log.warn(`could not record the compaction through the session service: ${messageOf(error)}`);
    }
  }

  /** The `branch-summary` service: a branch being left, summarised with this compaction's model and prompt. */
  async summarizeBranch(messages: readonly AgentMessage[], options: { instructions?: string; signal: AbortSignal }) {
    if (!this.agent) throw this.ctx.error("NO_SUMMARIZER", "no branch can be summarised before coil has started");
    const t = this.target(this.agent.state.model);
    const conversation = serialize(messages, this.budget(t.model));
    return this.complete(t, summaryPrompt({ conversation, instructions: options.instructions }), options.signal);
  }

  /** `/compact [instructions]`. */
  async command(args: string, agent: Agent): Promise<string> {
    this.agent ??= agent;
    this.lastFailure = undefined;
    // Another strategy may answer first (a Pi extension's session_before_compact): the kernel's event names it.
    let done: { by: string; tokensBefore: number; tokensAfter?: number } | undefined;
    const off = agent.subscribe((event) => {
      if (event.type === "compaction") done = event;
    });
    try {
      const result = await agent.compact(args.trim() || undefined);
      const d = result?.details as CompactionDetails | undefined;
      if (!d || done?.by !== this.ctx.id)
        return done
          ? `Compacted by ${done.by}: ${fmt(done.tokensBefore)} → ${done.tokensAfter === undefined ? "?" : fmt(done.tokensAfter)} tokens.`
          : "Compacted.";
      return `Compacted: ${fmt(d.tokensBefore)} → ${fmt(d.tokensAfter)} tokens. ${d.summarised} messages summarised by ${d.model}, ${d.kept} kept verbatim.`;
    } catch (error) {
      return `coil: ${this.lastFailure ?? `compaction failed, the context is unchanged: ${messageOf(error)}`}`;
    } finally {
      off();
    }
  }
}
