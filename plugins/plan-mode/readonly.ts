/** Plan mode's bash allowlist lives in lib/shell/readonly.ts (explore sub-agents use it too). */
export { notReadOnly, READ_ONLY_COMMANDS } from "../../lib/shell/readonly.js";
