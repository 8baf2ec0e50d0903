/**
 * Best-effort parse of a JSON prefix (tool-call arguments still streaming): open strings are
 * closed, dangling keys, commas and half-written literals are dropped, open containers closed.
 */

interface Token {
  kind: "{" | "}" | "[" | "]" | ":" | "," | "str" | "lit";
  raw: string;
  partial?: boolean;
}

function tokenize(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === " " || ch === "\n" || ch === "\r" || ch === "\t") {
      i++;
    } else if (ch === "{" || ch === "}" || ch === "[" || ch === "]" || ch === ":" || ch === ",") {
      out.push({ kind: ch, raw: ch });
      i++;
    } else if (ch === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      if (j < text.length) {
        out.push({ kind: "str", raw: text.slice(i, j + 1) });
        i = j + 1;
      } else {
        // an open string: drop a half-written escape, then close it
        const body = text
          .slice(i)
          .replace(/\\u[0-9a-fA-F]{0,3}$/, "")
          .replace(/(^|[^\\])((?:\\\\)*)\\$/, "$1$2");
        out.push({ kind: "str", raw: body + '"', partial: true });
        break;
      }
    } else {
      let j = i;
      while (j < text.length && !/[\s,:{}[\]"]/.test(text[j]!)) j++;
      out.push({ kind: "lit", raw: text.slice(i, j), partial: j === text.length });
      i = j;
    }
  }
  return out;
}

function validLiteral(raw: string): boolean {
  if (raw === "true" || raw === "false" || raw === "null") return true;
  return /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(raw);
}

/** The value of a JSON prefix, or undefined when nothing sensible can be made of it. */
export function parsePartialJson(text: string): unknown {
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    // fall through to repair
  }
  const tokens = tokenize(text);
  const containerAt = (upTo: number): string | undefined => {
    const stack: string[] = [];
    for (let k = 0; k < upTo; k++) {
      const t = tokens[k]!.kind;
      if (t === "{" || t === "[") stack.push(t);
      else if (t === "}" || t === "]") stack.pop();
    }
    return stack[stack.length - 1];
  };
  for (let guard = 0; guard < 8 && tokens.length > 0; guard++) {
    const last = tokens[tokens.length - 1]!;
    const prev = tokens[tokens.length - 2];
    if (last.kind === "," || last.kind === ":") tokens.pop();
    else if (last.kind === "lit" && !validLiteral(last.raw)) tokens.pop();
    else if (
      last.kind === "str" &&
      containerAt(tokens.length - 1) === "{" &&
      (!prev || prev.kind === "{" || prev.kind === ",")
    )
      tokens.pop(); // a key without a value
    else break;
  }
  const stack: string[] = [];
  let out = "";
  for (const t of tokens) {
    if (t.kind === "{" || t.kind === "[") stack.push(t.kind === "{" ? "}" : "]");
    else if (t.kind === "}" || t.kind === "]") stack.pop();
    out += t.raw;
  }
  out += stack.reverse().join("");
  try {
    return JSON.parse(out);
  } catch {
    return undefined;
  }
}
