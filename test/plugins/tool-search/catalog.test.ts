/** tool-search's matching: BM25 keywords over name words, server, description and parameters; select:; regex. */
import { describe, expect, it } from "vitest";
import { Type } from "../../../api/index.js";
import { find, normalize, toolEntry } from "../../../plugins/tool-search/index.js";

const tool = (name: string, description: string, params: Record<string, string> = {}) =>
  toolEntry({
    name,
    description,
    parameters: Type.Object(
      Object.fromEntries(Object.entries(params).map(([k, d]) => [k, Type.String({ description: d })])),
    ),
  });

const entries = [
  tool("mcp__github__create_issue", "Create a new issue in a GitHub repository", { title: "Issue title" }),
  tool("mcp__github__list_issues", "List issues in a GitHub repository", { state: "open or closed" }),
  tool("mcp__github__create_pull_request", "Create a new pull request"),
  tool("mcp__memory__create_entities", "Create multiple new entities in the knowledge graph"),
  tool("mcp__memory__read_graph", "Read the entire knowledge graph"),
  tool("mcp__notion__API-post-search", "Search pages and databases by title", { query: "Words to find" }),
  tool("mcp__filesystem__read_text_file", "Read a file as text", { path: "Where the file is" }),
];
const names = async (q: Parameters<typeof find>[1]) => (await find(entries, q)).matches.map((e) => e.name);

describe("tool search matching", () => {
  it("ranks by BM25 with the name's words first: 'create github issue' finds create_issue before the others", async () => {
    const found = await names({ query: "create github issue", limit: 3 });
    expect(found[0]).toBe("mcp__github__create_issue");
    expect(found).toContain("mcp__github__list_issues");
  });

  it("folds plurals and splits names: 'entity' finds create_entities, 'post search' the Notion tool", async () => {
    expect(normalize("entities")).toBe("entity");
    expect((await names({ query: "entity", limit: 5 }))[0]).toBe("mcp__memory__create_entities");
    expect((await names({ query: "post search", limit: 5 }))[0]).toBe("mcp__notion__API-post-search");
  });

  it("searches server names and parameter descriptions, and +word requires a word", async () => {
    expect((await names({ query: "memory", limit: 5 })).sort()).toEqual([
      "mcp__memory__create_entities",
      "mcp__memory__read_graph",
    ]);
    expect((await names({ query: "where the file is", limit: 1 }))[0]).toBe("mcp__filesystem__read_text_file");
    expect(await names({ query: "create +pull", limit: 5 })).toEqual(["mcp__github__create_pull_request"]);
  });

  it("select: takes exact names, or a tool's own name when only one server has it; the limit counts", async () => {
    expect(await names({ query: "select:mcp__memory__read_graph,create_issue,nope", limit: 5 })).toEqual([
      "mcp__memory__read_graph",
      "mcp__github__create_issue",
    ]);
    const cut = await find(entries, { query: "create", limit: 1 });
    expect(cut.matches).toHaveLength(1);
    expect(cut.more).toBeGreaterThan(0);
  });

  it("a pattern is a case-insensitive regular expression, name matches first; a bad one is an error for the model", async () => {
    expect(await names({ pattern: "^mcp__github__.*issue", limit: 5 })).toEqual([
      "mcp__github__create_issue",
      "mcp__github__list_issues",
    ]);
    expect((await names({ pattern: "KNOWLEDGE", limit: 5 })).sort()).toEqual([
      "mcp__memory__create_entities",
      "mcp__memory__read_graph",
    ]);
    await expect(find(entries, { pattern: "(", limit: 5 })).rejects.toThrow(/not a valid regular expression/);
    await expect(find(entries, { query: " ", limit: 5 })).rejects.toThrow(/give a query/);
  });
});
