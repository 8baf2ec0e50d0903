/**
 * edit: exact-text replacements, all matched against the original file, applied at once.
 * Calls on one file are serialised by its canonical path; the BOM and line endings are kept.
 */
import { Type } from "typebox";
import { defineTool, type ToolDefinition, type ToolOutput } from "../../api/index.js";
import { unifiedDiff } from "./diff.js";
import { planEdits, type PlannedEdit } from "./edit-match.js";
import { describeFsError } from "./errors.js";
import { withFileLock } from "./file-queue.js";
import type { ToolEnv } from "./options.js";
import { acceptFilePath, canonicalPath, displayPath, locatePath } from "./paths.js";

export const EditParams = Type.Object({
  path: Type.String(),
  edits: Type.Array(
    Type.Object({
      oldText: Type.String({ description: "Occurs exactly once in the file" }),
      newText: Type.String(),
    }),
    { minItems: 1 },
  ),
});

export interface EditDetails {
  path: string;
  /** Unified diff of the change. */
  diff: string;
  /** First changed line (1-based) in the new file. */
  firstChangedLine?: number;
  edits: { index: number; line: number; tolerant: boolean }[];
}

const fail = (text: string): ToolOutput<EditDetails> => ({ content: [{ type: "text", text }], isError: true });
const lf = (s: string) => s.replace(/\r\n/g, "\n");
const fatalDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Repair the usual shape mistakes: top-level oldText/newText, snake_case names, `edits` sent as a JSON string. */
export function prepareEditArguments(raw: Record<string, unknown>): Record<string, unknown> {
  const args: Record<string, unknown> = { ...acceptFilePath(raw) };
  if (typeof args.edits === "string") {
    try {
      args.edits = JSON.parse(args.edits);
    } catch {
      // leave it; validation explains what is wrong
    }
  }
  const oldText = args.oldText ?? args.old_string ?? args.old_text;
  const newText = args.newText ?? args.new_string ?? args.new_text;
  if (args.edits === undefined && typeof oldText === "string" && typeof newText === "string")
    args.edits = [{ oldText, newText }];
  if (args.edits && typeof args.edits === "object" && !Array.isArray(args.edits)) args.edits = [args.edits]; // one edit sent bare
  if (args.edits !== undefined)
    for (const key of ["oldText", "newText", "old_string", "new_string", "old_text", "new_text"]) delete args[key];
  if (Array.isArray(args.edits)) {
    args.edits = args.edits.map((e: unknown) => {
      if (!e || typeof e !== "object") return e;
      const { old_string, new_string, old_text, new_text, ...rest } = e as Record<string, unknown>;
      return {
        ...rest,
        oldText: rest.oldText ?? old_string ?? old_text,
        newText: rest.newText ?? new_string ?? new_text,
      };
    });
  }
  return args;
}

export function createEditTool(env: ToolEnv): ToolDefinition<typeof EditParams, EditDetails> {
  return defineTool({
    name: "edit",
    label: "Edit",
    description:
      "Replace exact text in a file. Each oldText must occur once in the file as it was before this call; edits must not overlap and apply together or not at all. " +
      "Copy oldText from a recent read with its indentation, short but unique. A match differing only in trailing spaces, quote, dash or space style, Unicode forms or accents is accepted. Line endings and BOM are kept.",
    parameters: EditParams,
    executionMode: "parallel",
    prepareArguments: prepareEditArguments,
    promptSnippet: "edit: replace exact text in a file (several non-overlapping replacements per call)",
    promptGuidelines: [
      "Change existing files with edit, several changes to one file in one call; use write only for new files or complete rewrites.",
    ],
    async execute(args) {
      const ops = env.ops();
      const abs = await locatePath(args.path, env.cwd, ops);
      const shown = displayPath(abs, env.cwd);
      const key = await canonicalPath(abs, ops);
      return withFileLock(key, async () => {
        try {
          const info = await ops.stat(abs);
          if (info.kind === "directory") return fail(`${shown} is a directory; edit changes files.`);
          if (info.kind !== "file") return fail(`${shown} is not a regular file; edit changes files.`);
        } catch (error) {
          const message = await describeFsError(error, abs, "edit", ops, env.cwd);
          return fail(
            (error as { code?: string }).code === "ENOENT" ? `${message} To create a new file, use write.` : message,
          );
        }
        let bytes: Uint8Array;
        try {
          bytes = await ops.readFile(abs);
        } catch (error) {
          return fail(await describeFsError(error, abs, "read", ops, env.cwd));
        }
        if (bytes.indexOf(0) >= 0)
          return fail(
            `${shown} is a binary file (it contains NUL bytes); edit only changes text files. Use bash if you must change it.`,
          );
        let text: string;
        try {
          text = fatalDecoder.decode(bytes);
        } catch {
          return fail(
            `${shown} is not valid UTF-8 text, and editing it would corrupt it. Use bash (e.g. iconv or sed) to change it.`,
          );
        }
        const bom = text.startsWith("\uFEFF");
        const body = bom ? text.slice(1) : text;
        const plan = planEdits(body, args.edits, shown);
        if (!plan.ok) return fail(plan.message);
        try {
          await ops.writeFile(abs, (bom ? "\uFEFF" : "") + plan.text);
        } catch (error) {
          return fail(await describeFsError(error, abs, "write", ops, env.cwd));
        }
        const { diff, firstChangedLine } = unifiedDiff(lf(body), lf(plan.text), shown);
        return {
          content: [{ type: "text", text: summary(shown, plan.edits) }],
          details: {
            path: abs,
            diff,
            firstChangedLine,
            edits: plan.edits.map((e) => ({ index: e.index, line: e.line, tolerant: e.tolerant })),
          },
        };
      });
    },
  });
}

function summary(shown: string, edits: readonly PlannedEdit[]): string {
  const lines = [...new Set(edits.map((e) => e.line))].sort((a, b) => a - b);
  let text = `Edited ${shown}: ${edits.length === 1 ? "1 replacement" : `${edits.length} replacements`} at line${lines.length === 1 ? "" : "s"} ${lines.join(", ")}.`;
  const loose = edits.filter((e) => e.tolerant);
  if (loose.length > 0) {
    const which = edits.length === 1 ? "The oldText" : loose.map((e) => `edits[${e.index}]`).join(", ");
    text += ` ${which} matched only after ignoring differences in trailing whitespace, quotes, dashes, spaces or Unicode forms (fullwidth, compatibility, accents); re-read the lines if exact formatting matters.`;
  }
  return text;
}
