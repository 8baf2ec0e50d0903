/**
 * Themes: a colour for every UI role, built-in `dark` and `light`, JSON theme files in
 * `$COIL_HOME/themes/`, and the colour depth the terminal gets (NO_COLOR, FORCE_COLOR, COLORTERM, TERM).
 * The file format is Pi's (`name`, `vars`, `colors` with the same token names), so a Pi theme loads as
 * it is; coil's own extra roles are optional and default to the built-in theme's. docs/tui.md#themes.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, isAbsolute, join, resolve } from "node:path";
import type { UiRole, UiTheme } from "../../lib/ui.js";

/** Roles every theme file defines (Pi's tokens). */
export const REQUIRED_ROLES = [
  "accent",
  "border",
  "borderAccent",
  "borderMuted",
  "success",
  "error",
  "warning",
  "muted",
  "dim",
  "text",
  "thinkingText",
  "selectedBg",
  "userMessageBg",
  "userMessageText",
  "customMessageBg",
  "customMessageText",
  "customMessageLabel",
  "toolPendingBg",
  "toolSuccessBg",
  "toolErrorBg",
  "toolTitle",
  "toolOutput",
  "mdHeading",
  "mdLink",
  "mdLinkUrl",
  "mdCode",
  "mdCodeBlock",
  "mdCodeBlockBorder",
  "mdQuote",
  "mdQuoteBorder",
  "mdHr",
  "mdListBullet",
  "toolDiffAdded",
  "toolDiffRemoved",
  "toolDiffContext",
  "syntaxComment",
  "syntaxKeyword",
  "syntaxFunction",
  "syntaxVariable",
  "syntaxString",
  "syntaxNumber",
  "syntaxType",
  "syntaxOperator",
  "syntaxPunctuation",
  "thinkingOff",
  "thinkingMinimal",
  "thinkingLow",
  "thinkingMedium",
  "thinkingHigh",
  "thinkingXhigh",
  "bashMode",
] as const;

/** coil's roles beyond Pi's: optional in a theme file (the built-in theme of the same `base` fills them). */
export const EXTRA_ROLES = [
  "toolDiffAddedWord",
  "toolDiffRemovedWord",
  "toolDiffHunk",
  "lineNumber",
  "footer",
  "statusText",
] as const;

export type ThemeRole = UiRole;
/** A colour: `#rrggbb`, a 256-colour index, or `""` for the terminal's default. */
export type ColorValue = string | number;

/** 0: no colour, 1: 16 colours, 2: 256, 3: 24-bit. */
export type ColorLevel = 0 | 1 | 2 | 3;

/**
 * The colour depth from the environment. FORCE_COLOR wins over NO_COLOR (as in Node): `0`/`false` turns
 * colour off, `1`/`2`/`3` (or empty/`true` = 1) sets the depth. Otherwise a non-empty NO_COLOR turns colour
 * off (https://no-color.org), and COLORTERM/TERM say what the terminal takes.
 */
export function colorLevel(env: NodeJS.ProcessEnv = process.env): ColorLevel {
  const force = env.FORCE_COLOR;
  if (force !== undefined) {
    if (force === "0" || force === "false") return 0;
    if (force === "2" || force === "3") return Number(force) as ColorLevel;
    return 1;
  }
  if (env.NO_COLOR) return 0;
  if (env.TERM === "dumb") return 0;
  if (/^(truecolor|24bit)$/i.test(env.COLORTERM ?? "")) return 3;
  if (/256/.test(env.TERM ?? "")) return 2;
  return 1;
}

const DARK: Record<ThemeRole, ColorValue> = {
  accent: 81,
  border: 240,
  borderAccent: 117,
  borderMuted: 240,
  success: 114,
  error: 203,
  warning: 221,
  muted: 245,
  dim: 242,
  text: "",
  thinkingText: 245,
  selectedBg: 237,
  userMessageBg: 236,
  userMessageText: "",
  customMessageBg: 236,
  customMessageText: "",
  customMessageLabel: 176,
  toolPendingBg: "",
  toolSuccessBg: "",
  toolErrorBg: "",
  toolTitle: 255,
  toolOutput: 249,
  mdHeading: 215,
  mdLink: 75,
  mdLinkUrl: 242,
  mdCode: 221,
  mdCodeBlock: 250,
  mdCodeBlockBorder: 240,
  mdQuote: 248,
  mdQuoteBorder: 240,
  mdHr: 240,
  mdListBullet: 81,
  toolDiffAdded: 114,
  toolDiffRemoved: 203,
  toolDiffContext: 244,
  syntaxComment: 244,
  syntaxKeyword: 176,
  syntaxFunction: 75,
  syntaxVariable: 117,
  syntaxString: 150,
  syntaxNumber: 215,
  syntaxType: 80,
  syntaxOperator: 252,
  syntaxPunctuation: 248,
  thinkingOff: 240,
  thinkingMinimal: 244,
  thinkingLow: 75,
  thinkingMedium: 81,
  thinkingHigh: 176,
  thinkingXhigh: 203,
  bashMode: 215,
  toolDiffAddedWord: 22,
  toolDiffRemovedWord: 52,
  toolDiffHunk: 80,
  lineNumber: 240,
  footer: 245,
  statusText: 250,
};

const LIGHT: Record<ThemeRole, ColorValue> = {
  ...DARK,
  accent: 25,
  border: 247,
  borderAccent: 31,
  borderMuted: 250,
  success: 28,
  error: 160,
  warning: 130,
  muted: 242,
  dim: 246,
  thinkingText: 242,
  selectedBg: 254,
  userMessageBg: 255,
  customMessageBg: 255,
  customMessageLabel: 90,
  toolTitle: 232,
  toolOutput: 238,
  mdHeading: 130,
  mdLink: 25,
  mdLinkUrl: 246,
  mdCode: 124,
  mdCodeBlock: 236,
  mdCodeBlockBorder: 248,
  mdQuote: 240,
  mdQuoteBorder: 248,
  mdHr: 248,
  mdListBullet: 25,
  toolDiffAdded: 28,
  toolDiffRemoved: 160,
  toolDiffContext: 242,
  syntaxComment: 244,
  syntaxKeyword: 90,
  syntaxFunction: 25,
  syntaxVariable: 31,
  syntaxString: 28,
  syntaxNumber: 130,
  syntaxType: 30,
  syntaxOperator: 236,
  syntaxPunctuation: 240,
  thinkingOff: 250,
  thinkingMinimal: 246,
  thinkingLow: 25,
  thinkingMedium: 31,
  thinkingHigh: 90,
  thinkingXhigh: 160,
  bashMode: 130,
  toolDiffAddedWord: 194,
  toolDiffRemovedWord: 224,
  toolDiffHunk: 30,
  lineNumber: 248,
  footer: 242,
  statusText: 238,
};

export const BUILTIN_THEMES: Record<string, Record<ThemeRole, ColorValue>> = { dark: DARK, light: LIGHT };

/** The 16 basic colours, for the nearest-colour fallback at level 1. */
const BASIC: [number, number, number][] = [
  [0, 0, 0],
  [205, 0, 0],
  [0, 205, 0],
  [205, 205, 0],
  [0, 0, 238],
  [205, 0, 205],
  [0, 205, 205],
  [229, 229, 229],
  [127, 127, 127],
  [255, 0, 0],
  [0, 255, 0],
  [255, 255, 0],
  [92, 92, 255],
  [255, 0, 255],
  [0, 255, 255],
  [255, 255, 255],
];

/** RGB of a 256-colour index (xterm's palette). */
function rgbOf256(n: number): [number, number, number] {
  if (n < 16) return BASIC[n]!;
  if (n >= 232) {
    const v = 8 + (n - 232) * 10;
    return [v, v, v];
  }
  const i = n - 16;
  const steps = [0, 95, 135, 175, 215, 255];
  return [steps[Math.floor(i / 36)]!, steps[Math.floor(i / 6) % 6]!, steps[i % 6]!];
}

function nearest(rgb: [number, number, number], count: number): number {
  let best = 0;
  let bestD = Number.POSITIVE_INFINITY;
  for (let n = 0; n < count; n++) {
    const [r, g, b] = rgbOf256(n);
    const d = (r - rgb[0]) ** 2 + (g - rgb[1]) ** 2 + (b - rgb[2]) ** 2;
    if (d < bestD) {
      bestD = d;
      best = n;
    }
  }
  return best;
}

/** The SGR parameters that set `value` as foreground (`bg` false) or background, at `level`; "" for none. */
/** A colour value as CSS (`#rrggbb`); undefined for "" (the default colour). For the HTML export. */
export function cssColor(value: ColorValue): string | undefined {
  if (value === "") return undefined;
  if (typeof value === "string") return value;
  return `#${rgbOf256(value)
    .map((n) => n.toString(16).padStart(2, "0"))
    .join("")}`;
}

export function sgrOf(value: ColorValue, level: ColorLevel, bg = false): string {
  if (level === 0 || value === "") return "";
  let rgb: [number, number, number] | undefined;
  let index: number | undefined;
  if (typeof value === "number") index = value;
  else {
    const m = /^#([0-9a-f]{6})$/i.exec(value);
    if (!m) return "";
    const hex = m[1]!;
    rgb = [0, 2, 4].map((i) => Number.parseInt(hex.slice(i, i + 2), 16)) as [number, number, number];
  }
  if (rgb && level === 3) return `${bg ? 48 : 38};2;${rgb.join(";")}`;
  if (level === 1) {
    const n = index !== undefined && index < 16 ? index : nearest(rgb ?? rgbOf256(index!), 16);
    return String((n < 8 ? 30 + n : 90 + n - 8) + (bg ? 10 : 0));
  }
  const n = index ?? nearest(rgb!, 256);
  return `${bg ? 48 : 38};5;${n}`;
}

/** What renderers and plugins colour with (Pi's `theme.fg(role, text)` shape). */
export interface Theme extends UiTheme {
  readonly name: string;
  /** The colour depth in force (0 under NO_COLOR). */
  readonly level: ColorLevel;
  fg(role: ThemeRole, text: string): string;
  bg(role: ThemeRole, text: string): string;
  bold(text: string): string;
  italic(text: string): string;
  underline(text: string): string;
  strikethrough(text: string): string;
  inverse(text: string): string;
}

/** Roles drawn faint (SGR 2) when colour is off, so hints still stand apart from content. */
const FAINT_WITHOUT_COLOR = new Set<ThemeRole>(["dim", "muted", "thinkingText", "lineNumber", "footer", "border"]);

/** `plain` (the test kit's): no escape codes at all when colour is off, not even the faint hint roles. */
export function makeTheme(
  name: string,
  colors: Record<ThemeRole, ColorValue>,
  level: ColorLevel,
  plain = false,
): Theme {
  const fgCodes = new Map<string, string>();
  const bgCodes = new Map<string, string>();
  for (const [role, value] of Object.entries(colors)) {
    fgCodes.set(role, sgrOf(value, level));
    bgCodes.set(role, sgrOf(value, level, true));
  }
  const style = (open: number, close: number) => (s: string) => `\x1b[${open}m${s}\x1b[${close}m`;
  return {
    name,
    level,
    fg(role, text) {
      const code = fgCodes.get(role);
      if (code) return `\x1b[${code}m${text}\x1b[39m`;
      if (level === 0 && !plain && FAINT_WITHOUT_COLOR.has(role)) return `\x1b[2m${text}\x1b[22m`;
      return text;
    },
    bg(role, text) {
      const code = bgCodes.get(role);
      return code ? `\x1b[${code}m${text}\x1b[49m` : text;
    },
    bold: plain ? (s) => s : style(1, 22),
    italic: plain ? (s) => s : style(3, 23),
    underline: plain ? (s) => s : style(4, 24),
    strikethrough: plain ? (s) => s : style(9, 29),
    inverse: plain ? (s) => s : style(7, 27),
  };
}

/** Where theme files are looked for: `$COIL_HOME/themes/<name>.json`. */
export function themeDir(home: string): string {
  return join(home, "themes");
}

/** Names of the themes one can pick: the built-ins, then the files in `$COIL_HOME/themes/`. */
export function themeNames(home: string): string[] {
  const dir = themeDir(home);
  const files = existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith(".json"))
        .map((f) => basename(f, ".json"))
    : [];
  return [...Object.keys(BUILTIN_THEMES), ...files.filter((f) => !(f in BUILTIN_THEMES)).sort()];
}

/**
 * Load a theme by name (built-in or `$COIL_HOME/themes/<name>.json`) or by file path. Problems (a missing
 * file, bad JSON, a role without a colour, an unknown variable) are thrown with the file and the role.
 */
export function loadTheme(spec: string, home: string, cwd: string, level: ColorLevel): Theme {
  const builtin = BUILTIN_THEMES[spec];
  if (builtin) return makeTheme(spec, builtin, level);
  const looksLikePath = spec.includes("/") || spec.endsWith(".json");
  const file = looksLikePath ? (isAbsolute(spec) ? spec : resolve(cwd, spec)) : join(themeDir(home), `${spec}.json`);
  if (!existsSync(file))
    throw new Error(
      `theme '${spec}' not found (${file} does not exist); themes: ${themeNames(home).join(", ")}. A theme file is JSON: see docs/tui.md#themes`,
    );
  let json: { name?: unknown; base?: unknown; vars?: Record<string, ColorValue>; colors?: Record<string, ColorValue> };
  try {
    json = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new Error(`theme file ${file} is not valid JSON: ${(error as Error).message}`);
  }
  const colors = json.colors ?? {};
  const missing = REQUIRED_ROLES.filter((r) => !(r in colors));
  if (missing.length)
    throw new Error(
      `theme file ${file} has no colour for ${missing.join(", ")} (every role needs one; "" is the terminal's default)`,
    );
  const base = BUILTIN_THEMES[typeof json.base === "string" ? json.base : "dark"] ?? DARK;
  const resolved = { ...base } as Record<ThemeRole, ColorValue>;
  for (const [role, raw] of Object.entries(colors)) {
    let value = raw;
    if (typeof value === "string" && value !== "" && !value.startsWith("#")) {
      const v = json.vars?.[value];
      if (v === undefined) throw new Error(`theme file ${file}: ${role} names '${value}', which is not in "vars"`);
      value = v;
    }
    if (typeof value === "string" && value !== "" && !/^#[0-9a-f]{6}$/i.test(value))
      throw new Error(`theme file ${file}: ${role} is '${value}'; use "#rrggbb", a 256-colour index or ""`);
    if (typeof value === "number" && !(Number.isInteger(value) && value >= 0 && value <= 255))
      throw new Error(`theme file ${file}: ${role} is ${value}; a 256-colour index is 0 to 255`);
    resolved[role as ThemeRole] = value;
  }
  return makeTheme(typeof json.name === "string" ? json.name : basename(file, ".json"), resolved, level);
}

let active: Theme | undefined;

/** The theme the TUI's renderers colour with (dark at the terminal's colour depth until the TUI sets one). */
export function theme(): Theme {
  active ??= makeTheme("dark", DARK, colorLevel());
  return active;
}

export function setTheme(next: Theme): void {
  active = next;
}
