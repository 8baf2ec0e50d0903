/**
 * Where to cut the history. The newest messages are kept verbatim; the cut never separates a tool call
 * from its result, because a kept part may only start at a message that is not a tool result (results
 * always follow their call directly).
 */
import { estimateMessageTokens, type AgentMessage } from "../../api/index.js";

export interface CutPlan {
  /** Index of the first kept message (in the messages after any earlier summary). */
  firstKept: number;
  /** Messages before the current turn: summarised into the main summary. */
  history: AgentMessage[];
  /**
   * When the cut falls inside a turn (a long tool loop after one user message), the early part of
   * that turn, from its user message to the cut: summarised on its own.
   */
  turnPrefix: AgentMessage[];
  kept: AgentMessage[];
}

/** A kept part may start here: not a tool result, so no result is separated from its call. */
export function isCutPoint(messages: readonly AgentMessage[], i: number): boolean {
  // Custom messages never reach the provider: look through them to the first message that does.
  for (let j = i; j < messages.length; j++) {
    if (messages[j]!.role !== "custom") return messages[j]!.role !== "toolResult";
  }
  return messages[i] !== undefined;
}

/** Tokens a turn may exceed the kept budget by and still be kept whole. */
const SMALL_TURN = 2_000;

const tokens = (messages: readonly AgentMessage[]) => messages.reduce((n, m) => n + estimateMessageTokens(m), 0);

/** Start of the turn holding index `i`: the last user message at or before it (0 if none). */
function turnStart(messages: readonly AgentMessage[], i: number): number {
  for (let j = i; j >= 0; j--) if (messages[j]!.role === "user") return j;
  return 0;
}

/**
 * Plan a cut that keeps at least `keepTokens` of the newest messages (more when the nearest cut point
 * is further back, or to keep a turn whole when that stays within `maxKeepTokens`). Something is always kept and something summarised; undefined when nothing can be
 * (a single message, or no cut point after the first).
 */
export function planCut(
  messages: readonly AgentMessage[],
  keepTokens: number,
  maxKeepTokens = Infinity,
): CutPlan | undefined {
  const points: number[] = [];
  for (let i = 1; i < messages.length; i++) if (isCutPoint(messages, i)) points.push(i);
  if (points.length === 0) return undefined;
  // Walk back from the end until the kept part holds keepTokens; cut at the nearest point before that.
  let acc = 0;
  let boundary = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    acc += estimateMessageTokens(messages[i]!);
    if (acc >= keepTokens) {
      boundary = i;
      break;
    }
  }
  let firstKept = points.filter((p) => p <= boundary).at(-1) ?? points[0]!;
  const start = messages[firstKept]!.role === "user" ? firstKept : turnStart(messages, firstKept - 1);
  let inTurn = messages[firstKept]!.role !== "user" && messages.slice(start, firstKept).some((m) => m.role === "user");
  // A turn that is not much bigger than what is kept anyway stays whole: no separate summary for its start.
  if (
    inTurn &&
    start > 0 &&
    tokens(messages.slice(start)) <= Math.min(maxKeepTokens, Math.max(2 * keepTokens, keepTokens + SMALL_TURN))
  ) {
    firstKept = start;
    inTurn = false;
  }
  return {
    firstKept,
    history: messages.slice(0, inTurn ? start : firstKept) as AgentMessage[],
    turnPrefix: inTurn ? (messages.slice(start, firstKept) as AgentMessage[]) : [],
    kept: messages.slice(firstKept) as AgentMessage[],
  };
}
