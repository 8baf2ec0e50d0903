/**
 * Syntax highlighting of code blocks and file content: lowlight (highlight.js grammars, offline) turns
 * code into a tree of classed spans, coloured here with the theme's `syntax*` roles. The library is
 * imported on first use only (about 100 ms for its 37 common grammars); until it has loaded, code is
 * drawn plain and `onReady` asks for a redraw.
 */
import { extname } from "node:path";
import { theme, type ThemeRole } from "./theme.js";

interface HastNode {
  type: string;
  value?: string;
  properties?: { className?: string[] };
  children?: HastNode[];
}
interface Lowlight {
  highlight(lang: string, code: string): HastNode;
  registered(alias: string): boolean;
}

let lowlight: Lowlight | undefined;
let loading: Promise<void> | undefined;
const waiting = new Set<() => void>();

/** Start loading the highlighter; `ready` runs once it can colour. */
export function loadHighlighter(ready?: () => void): void {
  if (lowlight) return;
  if (ready) waiting.add(ready);
  loading ??= import("lowlight")
    .then((m) => {
      lowlight = m.createLowlight(m.common) as unknown as Lowlight;
      const ready = [...waiting];
      waiting.clear();
      for (const fn of ready) fn();
    })
    .catch(() => undefined);
}

/** Run `fn` when the highlighter has loaded (whoever started the loading); at once if it has. */
export function onHighlighterReady(fn: () => void): void {
  if (lowlight) fn();
  else waiting.add(fn);
}

/** highlight.js class → theme role. */
const ROLES: Record<string, ThemeRole> = {
  comment: "syntaxComment",
  quote: "syntaxComment",
  doctag: "syntaxComment",
  meta: "syntaxComment",
  keyword: "syntaxKeyword",
  "selector-tag": "syntaxKeyword",
  built_in: "syntaxType",
  type: "syntaxType",
  "title.class": "syntaxType",
  "title.class.inherited": "syntaxType",
  class: "syntaxType",
  literal: "syntaxNumber",
  number: "syntaxNumber",
  symbol: "syntaxNumber",
  string: "syntaxString",
  regexp: "syntaxString",
  "meta string": "syntaxString",
  template: "syntaxString",
  "template-variable": "syntaxVariable",
  variable: "syntaxVariable",
  "variable.language": "syntaxKeyword",
  attr: "syntaxVariable",
  attribute: "syntaxVariable",
  params: "syntaxVariable",
  property: "syntaxVariable",
  "title.function": "syntaxFunction",
  "title.function.invoke": "syntaxFunction",
  title: "syntaxFunction",
  function: "syntaxFunction",
  operator: "syntaxOperator",
  punctuation: "syntaxPunctuation",
  tag: "syntaxKeyword",
  name: "syntaxKeyword",
  "selector-class": "syntaxFunction",
  "selector-id": "syntaxFunction",
  section: "syntaxFunction",
  bullet: "syntaxOperator",
  addition: "toolDiffAdded",
  deletion: "toolDiffRemoved",
};

function roleOf(classes: string[] | undefined): ThemeRole | undefined {
  if (!classes?.length) return undefined;
  const name = classes.map((c) => c.replace(/^hljs-/, "")).join(".");
  return ROLES[name] ?? ROLES[name.split(".")[0]!] ?? ROLES[classes.at(-1)!.replace(/^hljs-/, "")];
}

/** The tree as lines, each span coloured and closed at the end of its line (the TUI resets every line). */
function paint(tree: HastNode): string[] {
  const lines: string[] = [""];
  const walk = (node: HastNode, role: ThemeRole | undefined) => {
    if (node.type === "text") {
      const parts = (node.value ?? "").split("\n");
      parts.forEach((part, i) => {
        if (i > 0) lines.push("");
        if (part) lines[lines.length - 1] += role ? theme().fg(role, part) : part;
      });
      return;
    }
    const own = node.type === "element" ? (roleOf(node.properties?.className) ?? role) : role;
    for (const child of node.children ?? []) walk(child, own);
  };
  walk(tree, undefined);
  return lines;
}

/** A language name lowlight knows for a fence's info string or a file name, if any. */
export function languageOf(hint: string | undefined): string | undefined {
  if (!hint || !lowlight) return undefined;
  const candidates = [hint.toLowerCase(), extname(hint).slice(1).toLowerCase()].filter(Boolean);
  return candidates.find((c) => lowlight!.registered(c));
}

/** `code` coloured as `lang` (a fence's language or a file name); undefined when not loaded or unknown. */
export function highlight(code: string, lang: string | undefined): string[] | undefined {
  if (theme().level === 0) return undefined;
  if (!lowlight) {
    loadHighlighter();
    return undefined;
  }
  const name = languageOf(lang);
  if (!name) return undefined;
  try {
    return paint(lowlight.highlight(name, code));
  } catch {
    return undefined;
  }
}

/** A run of code text and the theme role that colours it (none: the text colour). */
export interface CodePiece {
  text: string;
  role?: ThemeRole;
}

/**
 * `code` as pieces with their roles, for output that is not a terminal (the HTML export); loads the
 * highlighter first. Undefined when the language is unknown. Colour settings (NO_COLOR) do not apply.
 */
export async function highlightPieces(code: string, lang: string | undefined): Promise<CodePiece[] | undefined> {
  await highlighterReady();
  const name = languageOf(lang);
  if (!lowlight || !name) return undefined;
  let tree: HastNode;
  try {
    tree = lowlight.highlight(name, code);
  } catch {
    return undefined;
  }
  const pieces: CodePiece[] = [];
  const walk = (node: HastNode, role: ThemeRole | undefined) => {
    if (node.type === "text") {
      if (node.value) pieces.push(role ? { text: node.value, role } : { text: node.value });
      return;
    }
    const own = node.type === "element" ? (roleOf(node.properties?.className) ?? role) : role;
    for (const child of node.children ?? []) walk(child, own);
  };
  walk(tree, undefined);
  return pieces;
}

/** Whether the highlighter has loaded (tests and the first frame). */
export function highlighterReady(): Promise<void> {
  loadHighlighter();
  return loading ?? Promise.resolve();
}
