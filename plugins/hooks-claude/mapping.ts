/** coil tool names and arguments ↔ Claude Code's (Bash, Read, Edit, Write, Grep, Glob, LS). */
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { textOf, type ToolResultMessage } from "../../api/index.js";

export const CLAUDE_TOOL_NAMES: Record<string, string> = {
  bash: "Bash",
  read: "Read",
  edit: "Edit",
  write: "Write",
  grep: "Grep",
  find: "Glob",
  ls: "LS",
  task: "Task",
};

export function claudeToolName(coilName: string): string {
  return CLAUDE_TOOL_NAMES[coilName] ?? coilName;
}

const absolute = (path: unknown, cwd: string): unknown =>
  typeof path === "string" ? resolve(cwd, path.startsWith("~/") ? join(homedir(), path.slice(2)) : path) : path;

/** Claude Code's `tool_input` for a coil tool call. Unknown tools pass their arguments as they are. */
export function claudeToolInput(coilName: string, args: Record<string, unknown>, cwd: string): Record<string, unknown> {
  const drop = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
  switch (coilName) {
    case "bash":
      return drop({
        command: args.command,
        timeout: typeof args.timeout === "number" ? args.timeout * 1000 : undefined,
      });
    case "read":
      return drop({ file_path: absolute(args.path, cwd), offset: args.offset, limit: args.limit });
    case "write":
      return drop({ file_path: absolute(args.path, cwd), content: args.content });
    case "edit": {
      const edits = (Array.isArray(args.edits) ? args.edits : []).map((e: Record<string, unknown>) => ({
        old_string: e.oldText,
        new_string: e.newText,
      }));
      return drop({
        file_path: absolute(args.path, cwd),
        old_string: edits[0]?.old_string,
        new_string: edits[0]?.new_string,
        replace_all: false,
        edits,
      });
    }
    case "grep":
      return drop({
        pattern: args.pattern,
        path: absolute(args.path, cwd),
        glob: args.glob,
        "-i": args.ignoreCase,
        "-C": args.context,
        head_limit: args.limit,
        output_mode: "content",
      });
    case "find":
      return drop({ pattern: args.pattern, path: absolute(args.path, cwd) });
    case "ls":
      return drop({ path: absolute(args.path ?? ".", cwd) });
    default:
      return { ...args };
  }
}

/** Claude Code's `tool_response` (tool-specific there; here the text plus the fields hook scripts usually read). */
export function claudeToolResponse(
  coilName: string,
  input: Record<string, unknown>,
  result: ToolResultMessage,
): Record<string, unknown> {
  const text = textOf(result);
  const base = { output: text, is_error: result.isError };
  switch (coilName) {
    case "bash":
      return { ...base, stdout: text, stderr: "", interrupted: false, isImage: false };
    case "write":
    case "edit":
      return { ...base, filePath: input.file_path, success: !result.isError };
    case "read":
      return { ...base, type: "text", file: { filePath: input.file_path, content: text } };
    default:
      return base;
  }
}

/**
 * coil arguments from a hook's `updatedInput` (Claude Code's `tool_input` shape), laid over the call's
 * Claude Code input so a hook may return only the fields it changes. A path that still names the same
 * file keeps the model's spelling. Other tools (MCP, plugins') take the merged input as their arguments.
 */
export function coilToolArgs(
  coilName: string,
  updated: Record<string, unknown>,
  args: Record<string, unknown>,
  cwd: string,
): Record<string, unknown> {
  const input: Record<string, unknown> = { ...claudeToolInput(coilName, args, cwd), ...updated };
  const drop = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
  const path = (key = "file_path", original: unknown = args.path) =>
    input[key] === absolute(original, cwd) ? original : input[key];
  switch (coilName) {
    case "bash":
      return drop({
        ...args,
        command: input.command,
        timeout: typeof input.timeout === "number" ? input.timeout / 1000 : undefined,
      });
    case "read":
      return drop({ ...args, path: path(), offset: input.offset, limit: input.limit });
    case "write":
      return drop({ ...args, path: path(), content: input.content });
    case "edit": {
      // `edits` wins when the hook changed it; otherwise old_string/new_string (Claude Code's Edit) make the one edit.
      const changed = "edits" in updated && Array.isArray(input.edits);
      // Unchecked: the hook's `edits` (or the call's) is taken to be an array of objects.
      const pairs = (
        changed
          ? input.edits
          : "old_string" in updated || "new_string" in updated
            ? [{ old_string: input.old_string, new_string: input.new_string }]
            : (input.edits ?? [])
      ) as Record<string, unknown>[];
      return drop({
        ...args,
        path: path(),
        edits: pairs.map((e) => ({ oldText: e.old_string, newText: e.new_string })),
      });
    }
    case "grep":
      return drop({
        ...args,
        pattern: input.pattern,
        path: path("path"),
        glob: input.glob,
        ignoreCase: input["-i"],
        context: input["-C"],
        limit: input.head_limit,
      });
    case "find":
      return drop({ ...args, pattern: input.pattern, path: path("path") });
    case "ls":
      return drop({ ...args, path: path("path", args.path ?? ".") });
    default:
      return input;
  }
}
