/**
 * The limits grep, find and ls enforce; their descriptions interpolate these constants. The byte
 * and line budget is the one every built-in tool shares (lib/tool-budget.ts).
 */

export { MAX_BYTES, MAX_LINES, formatSize } from "../../lib/tool-budget.js";

/** Characters of one matching line grep shows; longer lines are cut around the match. */
export const MAX_LINE_CHARS = 500;
/** Default number of results. */
export const DEFAULT_GREP_LIMIT = 100;
export const DEFAULT_FIND_LIMIT = 1000;
export const DEFAULT_LS_LIMIT = 500;
/** The built-in grep skips files larger than this (ripgrep has no such limit). */
export const MAX_SEARCH_FILE_BYTES = 32 * 1024 * 1024;
