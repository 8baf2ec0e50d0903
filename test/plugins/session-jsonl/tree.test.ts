/**
 * The pure session tree (tree.ts): entries in, path / state / context out, with no file and no store.
 */
import { describe, expect, it } from "vitest";
import { emptyUsage, textOf, type AgentMessage } from "../../../api/index.js";
import { SessionTree } from "../../../plugins/session-jsonl/tree.js";
import type { SessionEntry } from "../../../plugins/session-jsonl/api.js";

const at = "2026-01-01T00:00:00.000Z";
const user = (text: string): AgentMessage => ({ role: "user", content: text, timestamp: 1 });
const msg = (id: string, parentId: string | null, message: AgentMessage): SessionEntry => ({
  type: "message",
  id,
  parentId,
  timestamp: at,
  message,
});
const call = (id: string): AgentMessage => ({
  role: "assistant",
  content: [{ type: "toolCall", id, name: "bash", arguments: {} }],
  provider: "p",
  model: "m",
  usage: emptyUsage(),
  stopReason: "toolUse",
  timestamp: 2,
});

describe("SessionTree", () => {
  it("follows the branch of its leaf and projects the context after the newest compaction", () => {
    const tree = SessionTree.of([
      msg("a", null, user("one")),
      msg("b", "a", user("two")),
      msg("x", "a", user("other branch")),
      { type: "model_change", id: "m", parentId: "x", timestamp: at, provider: "openai", modelId: "gpt" },
      {
        type: "compaction",
        id: "c",
        parentId: "m",
        timestamp: at,
        summary: "earlier talk",
        firstKeptEntryId: "x",
        tokensBefore: 100,
      },
      msg("d", "c", user("three")),
    ]);
    expect(tree.path().map((e) => e.id)).toEqual(["a", "x", "m", "c", "d"]);
    expect(tree.path("b").map((e) => e.id)).toEqual(["a", "b"]);
    expect(tree.children("a").map((e) => e.id)).toEqual(["b", "x"]);
    expect(tree.state()).toEqual({ model: { provider: "openai", modelId: "gpt" } });
    expect(tree.context().map((m) => textOf(m))).toEqual([
      expect.stringContaining("<summary>\nearlier talk\n</summary>"),
      "other branch",
      "three",
    ]);
    expect(tree.context("b").map((m) => textOf(m))).toEqual(["one", "two"]);
  });

  it("answers a call left open at the leaf with an error result, and reports nothing on disk", () => {
    const tree = SessionTree.of([msg("a", null, user("go")), msg("b", "a", call("t1"))]);
    expect(tree.danglingCalls().map((c) => c.id)).toEqual(["t1"]);
    const last = tree.context().at(-1)!;
    expect(last.role).toBe("toolResult");
    expect(textOf(last)).toContain("Not executed");
    expect(tree.file).toBeUndefined();
  });
});
