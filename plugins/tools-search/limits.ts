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
/**
 * grep keeps at most this much of one line (ripgrep: --max-columns); a longer line is searched whole
 * but shown from this part, or, when its match lies further in, with a command that shows it.
 */
export const LONG_LINE_BYTES = 16 * 1024;
/**
 * The built-in grep searches a line in parts of this size, each overlapping the next by
 * SEARCH_OVERLAP_BYTES, so memory stays bounded however long a line is (in a line longer than this, a
 * match longer than the overlap may be missed).
 */
export const SEARCH_WINDOW_BYTES = 1024 * 1024;
export const SEARCH_OVERLAP_BYTES = 64 * 1024;
