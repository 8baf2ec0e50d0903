/**
 * compaction-summary: a `compact` strategy. Keeps about `keepRecentTokens` of the newest messages
 * verbatim (never separating a tool call from its result), and replaces the rest with a structured
 * summary written by the model — the session's, or a cheaper one named in the options. An earlier
 * summary is updated, not summarised again; the files read and modified accumulate across
 * compactions. The compaction is recorded in the session; if summarising fails nothing changes.
 * `/compact [instructions]` compacts now (docs/context.md).
 */
import {
  DEFAULT_RESERVE_TOKENS,
  Type,
  compactionLimit,
  definePlugin,
  estimateMessageTokens,
  messageOf,
  type Agent,
  type AgentMessage,
  type CompactRequest,
  type CompactResult,
  type ModelInfo,
  type Provider,
} from "../../kernel/index.js";
import type { SessionService } from "../session-jsonl/api.js";
import { planCut } from "./cut.js";
import { SUMMARISER_SYSTEM, filesTouched, mergeFiles, parseSummary, serialize, summaryMessage, summaryPrompt, turnPrefixPrompt } from "./summary.js";

export { planCut, isCutPoint } from "./cut.js";
export { parseSummary, summaryMessage, filesTouched, SUMMARY_INTRO } from "./summary.js";

export const CompactionOptions = Type.Object({
  /** Tokens of the newest messages kept verbatim (at most a quarter of the context window, and less when the compaction target is tight). */
  keepRecentTokens: Type.Integer({ minimum: 0, default: 20_000 }),
  /** `provider/model` to summarise with (a cheaper one); default: the session's model. */
  model: Type.Optional(Type.String({ minLength: 1 })),
  /** Output tokens the summary may use. */
  maxSummaryTokens: Type.Integer({ minimum: 256, default: 8_192 }),
});

export interface CompactionDetails {
  summary: string;
  readFiles: string[];
  modifiedFiles: string[];
  tokensBefore: number;
  tokensAfter: number;
  summarised: number;
  kept: number;
  /** The cut fell inside a turn, whose early part got its own summary. */
  splitTurn: boolean;
  /** `provider/model` that wrote the summary. */
  model: string;
}

/** The parts of the `session` service this plugin uses (declared structurally: plugins never import each other). */
const tokensOf = (messages: readonly AgentMessage[]) => messages.reduce((n, m) => n + estimateMessageTokens(m), 0);
const fmt = (n: number) => n.toLocaleString("en-US");

export default definePlugin({
  id: "compaction-summary",
  description: "Compaction by a structured summary of older messages; /compact",
  options: CompactionOptions,
  setup(ctx) {
    const o = ctx.options;
    let agent: Agent | undefined;
    /** Why the last attempt did not compact, for /compact to show. */
    let lastFailure: string | undefined;
    const fail = (level: "warn" | "error", why: string): undefined => {
      lastFailure = why;
      ctx.log[level](why);
      return undefined;
    };

    const target = (model: ModelInfo): { provider: Provider; model: ModelInfo } => {
      if (!o.model) {
        const provider = ctx.providers.get(model.provider);
        if (!provider) throw new Error(`provider '${model.provider}' of the session's model is not registered`);
        return { provider, model };
      }
      const [pid, ...rest] = o.model.split("/");
      const id = rest.join("/");
      const provider = ctx.providers.get(pid!);
      if (!provider || !id) throw new Error(`the 'model' option '${o.model}' must be provider/model with a registered provider (registered: ${ctx.providers.ids().join(", ")})`);
      const found = provider.models?.find((m) => m.id === id) ?? provider.resolveModel?.(id);
      if (!found) throw new Error(`provider '${pid}' has no model '${id}' (the 'model' option)`);
      return { provider, model: found };
    };

    /** Output tokens a summary may use: the option, within the summarising model's output limit. */
    const summaryLimit = (m: ModelInfo) => Math.min(m.maxOutput || o.maxSummaryTokens, o.maxSummaryTokens);

    /** One summariser call; resolves to the text, rejects with the reason. */
    const complete = async (t: { provider: Provider; model: ModelInfo }, prompt: string, signal: AbortSignal, maxTokens = summaryLimit(t.model)): Promise<string> => {
      let final;
      const stream = t.provider.stream(
        { model: t.model, system: [{ id: "compaction-summary", text: SUMMARISER_SYSTEM }], messages: [{ role: "user", content: prompt, timestamp: Date.now() }], tools: [], options: { maxTokens, thinking: "off" } },
        signal,
      );
      for await (const event of stream) {
        if (event.type === "done" || event.type === "error") {
          final = event.message;
          break;
        }
      }
      if (!final) throw new Error("the provider ended its stream without a reply");
      if (final.stopReason === "error" || final.stopReason === "aborted") throw new Error(final.errorMessage ?? final.stopReason);
      const text = final.content.map((c) => (c.type === "text" ? c.text : "")).join("").trim();
      if (!text) throw new Error("the summary came back empty");
      return text;
    };

    /** Characters of conversation that fit the summariser's window next to its output. */
    const budget = (m: ModelInfo) => Math.max(8_000, (m.contextWindow - Math.min(m.maxOutput, o.maxSummaryTokens) - 2_000) * 3);

    const compact = async (req: CompactRequest): Promise<CompactResult | undefined> => {
      lastFailure = undefined;
      const level = req.reason === "threshold" ? "warn" : "error";
      let t;
      try {
        t = target(req.model);
      } catch (error) {
        return fail("error", `compaction failed, the context is unchanged: ${messageOf(error)}`);
      }
      const prev = parseSummary(req.messages[0]);
      const body = prev ? req.messages.slice(1) : req.messages;
      // The summary and the kept messages must fit under the target: the summary gets at most half of it,
      // the kept part what is left (kept whole turns included), and keepRecentTokens at most half of that.
      const goal = req.targetTokens ?? compactionLimit(req.contextWindow, DEFAULT_RESERVE_TOKENS);
      const summaryTokens = Math.max(256, Math.min(summaryLimit(t.model), Math.floor(goal / 2)));
      const maxKeep = Math.max(0, goal - summaryTokens);
      const keep = Math.min(o.keepRecentTokens, Math.floor(req.contextWindow / 4), Math.floor(maxKeep / 2));
      const plan = planCut(body, keep, maxKeep);
      if (!plan) return fail("warn", `nothing to compact: the context (${fmt(req.tokens)} tokens) has no earlier part that can be summarised`);
      const chars = budget(t.model);
      let main: string;
      let prefix: string | undefined;
      try {
        [main, prefix] = await Promise.all([
          plan.history.length > 0
            ? complete(t, summaryPrompt({ conversation: serialize(plan.history, chars), previous: prev?.summary, instructions: req.instructions }), req.signal, summaryTokens)
            : Promise.resolve(prev?.summary ?? ""),
          plan.turnPrefix.length > 0 ? complete(t, turnPrefixPrompt(serialize(plan.turnPrefix, chars)), req.signal, summaryTokens) : Promise.resolve(undefined),
        ]);
      } catch (error) {
        return fail("error", `compaction failed, the context is unchanged: summarising with ${t.model.provider}/${t.model.id} failed: ${messageOf(error)}`);
      }
      const summary = [main.trim(), prefix ? `## Current turn (its early part, summarised)\n\n${prefix.trim()}` : ""].filter(Boolean).join("\n\n");
      const files = mergeFiles(prev, filesTouched([...plan.history, ...plan.turnPrefix]));
      const message = summaryMessage({ summary, ...files });
      const messages = [message, ...plan.kept];
      const tokensBefore = tokensOf(req.messages);
      const tokensAfter = tokensOf(messages);
      if (tokensAfter >= tokensBefore) {
        return fail(level, `compaction would not shrink the context (${fmt(tokensBefore)} → ${fmt(tokensAfter)} tokens), the context is unchanged: the summary is larger than the ${plan.history.length + plan.turnPrefix.length} messages it would replace`);
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
      record(req, message, plan.kept, details);
      return { messages, tokensAfter, details };
    };

    /** Store the compaction as a session entry: the summary plus "keep from entry X" when the kept part is the session's tail. */
    const record = (req: CompactRequest, message: AgentMessage, kept: readonly AgentMessage[], details: CompactionDetails) => {
      const session = ctx.services.get("session");
      // Only the agent's own context is recorded (not a branch summary asked through the hook).
      const live = agent?.state.messages;
      if (!session || !live || live.length !== req.messages.length || live.some((m, i) => m !== req.messages[i])) return;
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
          by: ctx.id,
          details: { readFiles, modifiedFiles, splitTurn: details.splitTurn, model: details.model },
        });
      } catch (error) {
        // The session plugin records it from the compaction event instead.
        ctx.log.warn(`could not record the compaction through the session service: ${messageOf(error)}`);
      }
    };

    ctx.tap("compact", compact);

    ctx.onStart((a) => {
      agent = a;
      const session = ctx.services.get("session");
      session?.setSummarizer(async (messages, { instructions, signal }) => {
        const t = target(a.state.model);
        return complete(t, summaryPrompt({ conversation: serialize(messages, budget(t.model)), instructions }), signal);
      });
    });

    ctx.commands.register({
      name: "compact",
      description: "summarise older messages now to free context",
      argumentHint: "[what the summary should focus on]",
      async run(args, a) {
        agent ??= a;
        lastFailure = undefined;
        try {
          const result = await a.compact(args.trim() || undefined);
          const d = result?.details as CompactionDetails | undefined;
          if (!d) return "Compacted.";
          return `Compacted: ${fmt(d.tokensBefore)} → ${fmt(d.tokensAfter)} tokens. ${d.summarised} messages summarised by ${d.model}, ${d.kept} kept verbatim.`;
        } catch (error) {
          return `coil: ${lastFailure ?? `compaction failed, the context is unchanged: ${messageOf(error)}`}`;
        }
      },
    });
  },
});
