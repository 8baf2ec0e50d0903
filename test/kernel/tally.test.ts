import { describe, expect, it } from "vitest";
import { estimateMessageTokens, type AgentMessage } from "../../kernel/index.js";
import { ContextTally } from "../../kernel/compaction.js";

const usage = (input: number) => ({
  input,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
});
const assistant = (text: string, input: number, stopReason = "stop"): AgentMessage =>
  ({
    role: "assistant",
    content: [{ type: "text", text }],
    api: "x",
    provider: "x",
    model: "x",
    usage: usage(input),
    stopReason,
    timestamp: 0,
  }) as AgentMessage;

/** A user message that counts how often its content is read. */
function counted(text: string, reads: { n: number }): AgentMessage {
  return Object.defineProperty({ role: "user", timestamp: 0 }, "content", {
    get: () => {
      reads.n++;
      return text;
    },
    enumerable: true,
  }) as AgentMessage;
}

describe("ContextTally", () => {
  it("reads only the messages after the newest usage to give the context size (a resumed history is not walked)", () => {
    const reads = { n: 0 };
    const old = Array.from({ length: 50 }, (_, i) => counted(`old message ${i} `.repeat(20), reads));
    const tail: AgentMessage = { role: "user", content: "x".repeat(400), timestamp: 0 };
    const messages = [...old, assistant("answer", 5000), tail];
    const tally = new ContextTally(messages, 0);
    expect(tally.tokens).toBe(5000 + 100);
    expect(tally.measured).toBe(true);
    expect(reads.n).toBe(0);
    // the whole estimate is still there when asked (compaction asks), and follows appends
    const all = messages.reduce((n, m) => n + estimateMessageTokens(m), 0);
    expect(tally.estimated()).toBe(all);
    tally.add({ role: "user", content: "y".repeat(40), timestamp: 0 });
    expect(tally.estimated()).toBe(all + 10);
    expect(tally.tokens).toBe(5000 + 110);
  });

  it("ignores usage before the floor and from failed responses, and estimates everything without usage", () => {
    const a: AgentMessage = { role: "user", content: "a".repeat(80), timestamp: 0 };
    const failed = assistant("b".repeat(40), 9000, "error");
    expect(new ContextTally([a, assistant("c".repeat(40), 7000), a], 2).tokens).toBe(20 + 10 + 20);
    expect(new ContextTally([a, failed, a], 0).tokens).toBe(20 + 10 + 20);
    expect(new ContextTally([a, assistant("c", 7000), failed], 0).tokens).toBe(7000 + 10);
    expect(new ContextTally([], 0).tokens).toBe(0);
  });
});
