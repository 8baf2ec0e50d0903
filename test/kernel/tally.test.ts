/** History's context tally (kernel/compaction.ts): usage where the provider measured it, estimates after it. */
import { describe, expect, it } from "vitest";
import { type AgentMessage, estimateMessageTokens } from "../../api/index.js";
import { History } from "../../kernel/compaction.js";

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

/** A (frozen) user message that counts how often its content is read. */
function counted(text: string, reads: { n: number }): AgentMessage {
  const message = Object.defineProperty({ role: "user", timestamp: 0 }, "content", {
    get: () => {
      reads.n++;
      return text;
    },
    enumerable: true,
  });
  return Object.freeze(message) as AgentMessage;
}

describe("History's context tally", () => {
  it("reads only the messages after the newest usage to give the context size (a resumed history is not walked)", () => {
    const reads = { n: 0 };
    const old = Array.from({ length: 50 }, (_, i) => counted(`old message ${i} `.repeat(20), reads));
    const tail: AgentMessage = { role: "user", content: "x".repeat(400), timestamp: 0 };
    const messages = [...old, assistant("answer", 5000), tail];
    const history = new History(messages);
    history.overhead = 3000; // counted in the usage figure already
    expect(history.tokens()).toBe(5000 + 100);
    expect(reads.n).toBe(0);
    // the whole estimate is still there when asked (compaction asks), and follows appends
    const all = messages.reduce((n, m) => n + estimateMessageTokens(m), 0);
    expect(history.estimated()).toBe(all);
    history.append({ role: "user", content: "y".repeat(40), timestamp: 0 });
    expect(history.estimated()).toBe(all + 10);
    expect(history.tokens()).toBe(5000 + 110);
  });

  it("ignores usage from failed responses and a compaction's result, and estimates everything without usage", () => {
    const a: AgentMessage = { role: "user", content: "a".repeat(80), timestamp: 0 };
    const failed = assistant("b".repeat(40), 9000, "error");
    const compacted = new History([]);
    compacted.replace([a, assistant("c".repeat(40), 7000), a], true);
    expect(compacted.tokens()).toBe(20 + 10 + 20);
    expect(new History([a, failed, a]).tokens()).toBe(20 + 10 + 20);
    expect(new History([a, assistant("c", 7000), failed]).tokens()).toBe(7000 + 10);
    const empty = new History([]);
    expect(empty.tokens()).toBe(0);
    empty.overhead = 250; // the system prompt and tools count while no usage is known
    expect(empty.tokens()).toBe(250);
  });
});
