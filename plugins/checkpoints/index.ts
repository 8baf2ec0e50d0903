/**
 * checkpoints: before the first mutating tool call of each prompt (edit, write, bash beyond the read-only
 * allowlist, MCP tools not marked read-only), the project's files are snapshotted into a shadow git
 * repository under `$COIL_HOME/checkpoints/<project id>`; after each turn that changed something, the
 * state the agent left is snapshotted too. `/rewind` lists the prompts and what changed after each (by
 * tools and by bash); `/rewind <n>` puts the files back as they were before prompt n and moves the
 * conversation to just before it, as a new branch of the session tree. The session records which
 * checkpoint belongs to which prompt (a `checkpoint` custom entry), so `-c` and `/resume` keep rewind
 * working. `coil checkpoints list|prune`. See docs/checkpoints.md.
 */
import { definePlugin, Type, type Static } from "../../api/index.js";
import { READ_ONLY_COMMANDS } from "../../lib/shell/read-only-commands.js";
import { createCheckpoints, listCheckpoints, pruneCheckpoints } from "./run.js";

export { ShadowRepo, projectId } from "./shadow.js";
export {
  CHECKPOINT_ENTRY,
  REWIND_ENTRY,
  parseRewindArgs,
  type CheckpointRecord,
  type RewindPoint,
  type RewindRecord,
} from "./records.js";

export const CheckpointOptions = Type.Object({
  /** Files bigger than this (bytes) are not snapshotted; they are listed as skipped. */
  maxFileSize: Type.Integer({ minimum: 1, default: 5 * 1024 * 1024 }),
  /** Checkpoints older than this many days are pruned (after the first snapshot coil takes once started, and by `coil checkpoints prune`). */
  maxAgeDays: Type.Number({ minimum: 0, default: 30 }),
  /** At most this many checkpoints are kept per project (the oldest go first). */
  maxCount: Type.Integer({ minimum: 2, default: 1000 }),
  /** Tools that never change files (besides tools marked read-only, such as read-only MCP tools). */
  readOnlyTools: Type.Array(Type.String(), { default: ["read", "grep", "find", "ls"] }),
  /** Programs a bash command may start with and still count as read-only (no snapshot). */
  readOnlyCommands: Type.Array(Type.String(), { default: READ_ONLY_COMMANDS }),
});
export type CheckpointOptions = Static<typeof CheckpointOptions>;

export default definePlugin({
  id: "checkpoints",
  description:
    "Checkpoints of the project's files before each prompt's changes (bash included); /rewind puts files and conversation back",
  options: CheckpointOptions,
  setup(ctx) {
    const checkpoints = createCheckpoints(ctx);
    ctx.onStart((_agent, _io, info) => checkpoints.start(info.mode));
    ctx.on("agent_start", () => checkpoints.runStarted());
    ctx.on("message_end", (event) => checkpoints.message(event.message));
    ctx.tap("tool_call", (info) => checkpoints.toolCall(info));
    // After a turn that changed something: snapshot what the agent left, and record the prompt's checkpoint.
    ctx.tap("turn_end", () => checkpoints.turnEnd());
    ctx.onStop(() => checkpoints.stop());
    ctx.commands.register({
      name: "rewind",
      description: "list the rewind points, or put the files and the conversation back to just before prompt n",
      argumentHint: "[n] [--code | --conversation] [--force]",
      run: (args, agent) => checkpoints.rewind(args, agent),
    });
    ctx.subcommands.register({
      name: "checkpoints",
      description: "the project's checkpoints (/rewind): list them, or prune old ones",
      commands: [
        {
          name: "list",
          description: "list this project's checkpoints, newest last",
          options: [{ name: "json", description: "print JSON: { project, gitDir, checkpoints: [...] }" }],
          run: (_args, io, options) => listCheckpoints(ctx, io, options.json === true),
        },
        {
          name: "prune",
          description: "remove old checkpoints (by default those the plugin's maxAgeDays and maxCount would)",
          options: [
            {
              name: "older-than",
              type: "number",
              valueName: "days",
              description: "remove checkpoints older than this",
            },
            { name: "keep", type: "number", valueName: "n", description: "keep at most the newest n" },
          ],
          run: (_args, io, options) =>
            pruneCheckpoints(ctx, io, options["older-than"] as number | undefined, options.keep as number | undefined),
        },
      ],
    });
  },
});
