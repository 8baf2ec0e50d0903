/**
 * Which bash commands only look: the judgement is lib/shell/read-only-commands.ts, shared with plan mode,
 * `explore` sub-agents and checkpoints, so a command is read-only (or not) the same way everywhere.
 */
export { isReadOnlyCommand, READ_ONLY_COMMANDS, readOnlyRefusal } from "../../lib/shell/read-only-commands.js";
