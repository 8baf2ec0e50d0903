/**
 * The limits every tool enforces. Tool descriptions interpolate these same constants, so what the
 * model is told and what the code does cannot drift apart.
 */

export { MAX_BYTES, MAX_LINES, formatSize } from "../../lib/tool-budget.js";

/** Largest image read returns as image content (providers reject bigger ones). */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
/** Bytes sniffed at the start of a file to tell text, images and binary apart. */
export const SNIFF_BYTES = 8 * 1024;
/** Default and maximum bash timeouts in seconds (plugin options can change both). */
export const DEFAULT_BASH_TIMEOUT_S = 120;
export const MAX_BASH_TIMEOUT_S = 600;
/** Grace between SIGTERM and SIGKILL when a command's process tree is terminated. */
export const DEFAULT_KILL_GRACE_MS = 2000;
