/**
 * The limits every tool enforces. Tool descriptions interpolate these same constants, so what the
 * model is told and what the code does cannot drift apart.
 */

export { MAX_BYTES, MAX_LINES, formatSize } from "../../lib/tool-budget.js";

export { MAX_IMAGE_BYTES, SNIFF_BYTES } from "../../lib/sniff.js";
/** Default and maximum bash timeouts in seconds (plugin options can change both). */
export const DEFAULT_BASH_TIMEOUT_S = 120;
export const MAX_BASH_TIMEOUT_S = 600;
/** Grace between SIGTERM and SIGKILL when a command's process tree is terminated. */
export const DEFAULT_KILL_GRACE_MS = 2000;
