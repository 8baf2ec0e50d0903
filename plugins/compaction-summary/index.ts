/**
 * compaction-summary: a `compact` strategy. Keeps about `keepRecentTokens` of the newest messages
 * verbatim (never separating a tool call from its result), and replaces the rest with a structured
 * summary written by the model — the session's, or a cheaper one named in the options. An earlier
 * summary is updated, not summarised again; the files read and modified accumulate across
 * compactions. The compaction is recorded in the session; if summarising fails nothing changes.
 * `/compact [instructions]` compacts now (docs/context.md).
 */
import { Type, definePlugin } from "../../api/index.js";
import type {} from "../session-jsonl/api.js"; // types the `branch-summary` service
import { Compactor } from "./compactor.js";

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

export default definePlugin({
  id: "compaction-summary",
  description: "Compaction by a structured summary of older messages; /compact",
  options: CompactionOptions,
  setup(ctx) {
    const compactor = new Compactor(ctx);
    ctx.tap("compact", (req) => compactor.compact(req));
    ctx.onStart((agent) => {
      compactor.agent = agent;
    });
    ctx.services.provide("branch-summary", {
      summarize: (messages, options) => compactor.summarizeBranch(messages, options),
    });
    ctx.commands.register({
      name: "compact",
      description: "summarise older messages now to free context",
      argumentHint: "[what the summary should focus on]",
      run: (args, agent) => compactor.command(args, agent),
    });
  },
});
