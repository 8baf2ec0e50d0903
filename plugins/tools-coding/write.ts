/** write: create or overwrite a file, creating parent directories. Serialised per file with edit. */
import { dirname } from "node:path";
import { Type } from "typebox";
import { defineTool, type ToolDefinition, type ToolOutput } from "../../api/index.js";
import { describeFsError } from "./errors.js";
import { formatSize } from "./limits.js";
import { withFileLock } from "./file-queue.js";
import type { ToolEnv } from "./options.js";
import { acceptFilePath, canonicalPath, codeOf, displayPath, locatePath } from "./paths.js";

export const WriteParams = Type.Object({
  path: Type.String(),
  content: Type.String(),
});

export interface WriteDetails {
  path: string;
  bytes: number;
  lines: number;
  created: boolean;
  /** Size before, when the file existed. */
  previousBytes?: number;
}

const fail = (text: string): ToolOutput<WriteDetails> => ({ content: [{ type: "text", text }], isError: true });

export function createWriteTool(env: ToolEnv): ToolDefinition<typeof WriteParams, WriteDetails> {
  return defineTool({
    name: "write",
    label: "Write",
    description: "Create a file (and its parent folders) or replace its whole content, exactly as given.",
    parameters: WriteParams,
    executionMode: "parallel",
    prepareArguments: acceptFilePath,
    promptSnippet: "write: create a file or replace its whole content",
    promptGuidelines: [
      "Change existing files with edit, several changes to one file in one call; use write only for new files or complete rewrites.",
    ],
    async execute(args) {
      const ops = env.ops();
      const abs = await locatePath(args.path, env.cwd, ops);
      const shown = displayPath(abs, env.cwd);
      const key = await canonicalPath(abs, ops);
      return withFileLock(key, async () => {
        let previousBytes: number | undefined;
        try {
          const info = await ops.stat(abs);
          if (info.kind === "directory") return fail(`${shown} is a directory; write needs a file path.`);
          previousBytes = info.size;
        } catch (error) {
          if (codeOf(error) !== "ENOENT") return fail(await describeFsError(error, abs, "write", ops, env.cwd));
        }
        try {
          if (previousBytes === undefined) await ops.mkdir(dirname(abs));
          await ops.writeFile(abs, args.content);
        } catch (error) {
          return fail(await describeFsError(error, abs, "write", ops, env.cwd));
        }
        const bytes = Buffer.byteLength(args.content, "utf8");
        const lines = args.content === "" ? 0 : args.content.split("\n").length - (args.content.endsWith("\n") ? 1 : 0);
        const what = previousBytes === undefined ? "created" : `replaced its previous ${formatSize(previousBytes)}`;
        return {
          content: [
            {
              type: "text",
              text: `Wrote ${formatSize(bytes)} (${lines} line${lines === 1 ? "" : "s"}) to ${shown}; ${what}.`,
            },
          ],
          details: { path: abs, bytes, lines, created: previousBytes === undefined, previousBytes },
        };
      });
    },
  });
}
