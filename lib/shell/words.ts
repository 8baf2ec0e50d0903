/**
 * The words and redirections of one simple command, as a POSIX shell reads them: quotes removed,
 * backslashes honoured, and for each word whether the shell may still turn it into something else
 * (an unquoted `$…`, a backtick, a glob `*?[`, a brace `{a,b}`): `sort *` can become
 * `sort --compress-program=./x a`, and `uniq {a,b}` becomes `uniq a b`. The permission gate and plan
 * mode judge a command by these words (lib/shell/read-only-commands.ts), and the gate finds the paths a
 * command names in them. A careful reading for permission checks, not a shell: no expansion is done.
 */

export interface Word {
  /** The word as the program receives it when nothing expands: quotes and backslashes removed. */
  value: string;
  /** As written (quotes kept). */
  raw: string;
  /** The shell may change it: an unquoted `$`, backtick, glob character or brace list, or `$` inside double quotes. */
  expands: boolean;
  /** Some part of it was quoted or escaped (so `'ls'` is not an alias, `"X=1"` not an assignment). */
  quoted: boolean;
}

export interface Redirect {
  /** The operator with its file descriptor: `>`, `2>>`, `&>`, `<`, `<<`, `>&`, `<>` ... */
  op: string;
  /** The target word (a file, `&1`-style descriptors are given as `&1`), undefined for a here-document body. */
  target?: Word;
}

export interface SimpleCommand {
  words: Word[];
  redirects: Redirect[];
}

const REDIRECT = /^(\d*)(&>>|&>|>>|>\||>&|<<<|<<-|<<|<>|<&|>|<)/;
const GLOB = /[*?[]/;

/** Read one simple command (no `;`, `|`, `&&`: split those first with splitCommand). */
export function parseSimpleCommand(text: string): SimpleCommand {
  const words: Word[] = [];
  const redirects: Redirect[] = [];
  const n = text.length;
  let i = 0;
  const skipSpace = () => {
    while (i < n && /\s/.test(text[i]!)) i++;
  };
  /** One word from `i` (which is not a space): it ends at a space or an unquoted `<`, `>` or `&>`. */
  const readWord = (): Word => {
    const start = i;
    let value = "";
    let expands = false;
    let quoted = false;
    let braceOpen = -1;
    while (i < n) {
      const c = text[i]!;
      if (/\s/.test(c) || c === "<" || c === ">" || (c === "&" && text[i + 1] === ">")) break;
      if (c === "\\") {
        quoted = true;
        if (i + 1 < n && text[i + 1] !== "\n") value += text[i + 1];
        i += 2;
      } else if (c === "'") {
        quoted = true;
        const end = text.indexOf("'", i + 1);
        const stop = end < 0 ? n : end;
        value += text.slice(i + 1, stop);
        i = stop + 1;
      } else if (c === "$" && text[i + 1] === "'") {
        // ANSI-C quoting: escapes can make any character, so the value is not known for certain.
        quoted = true;
        expands = true;
        let j = i + 2;
        while (j < n && text[j] !== "'") j += text[j] === "\\" ? 2 : 1;
        value += text.slice(i + 2, j);
        i = j + 1;
      } else if (c === '"') {
        quoted = true;
        i++;
        while (i < n && text[i] !== '"') {
          if (text[i] === "\\" && /[$`"\\\n]/.test(text[i + 1] ?? "")) {
            value += text[i + 1];
            i += 2;
            continue;
          }
          if (text[i] === "$" || text[i] === "`") expands = true;
          value += text[i];
          i++;
        }
        i++;
      } else {
        if (c === "$" || c === "`" || GLOB.test(c)) expands = true;
        if (c === "{") braceOpen = value.length;
        if (c === "}" && braceOpen >= 0 && /,|\.\./.test(value.slice(braceOpen))) expands = true;
        value += c;
        i++;
      }
    }
    return { value, raw: text.slice(start, i), expands, quoted };
  };
  for (;;) {
    skipSpace();
    if (i >= n || text[i] === "#") break; // the end, or a comment
    const m = REDIRECT.exec(text.slice(i));
    if (!m) {
      words.push(readWord());
      continue;
    }
    i += m[0].length;
    const op = m[0];
    skipSpace();
    if (/<<-?$/.test(op)) {
      // A here-document: the delimiter word; its body follows on later lines and is not a file.
      if (i < n) readWord();
      redirects.push({ op });
    } else if (/&$/.test(op) && /^(\d+|-)(?![^\s<>])/.test(text.slice(i))) {
      const d = /^(\d+|-)/.exec(text.slice(i))![0];
      i += d.length;
      redirects.push({ op, target: { value: `&${d}`, raw: d, expands: false, quoted: false } });
    } else redirects.push({ op, target: i < n ? readWord() : undefined });
  }
  return { words, redirects };
}

/** `NAME=value` (or `NAME+=value`) as the shell reads it before a command: an environment assignment. */
export function isAssignment(word: Word): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*\+?=/.test(word.raw);
}

/** Output redirections write (or truncate) their target; these targets are harmless. */
const HARMLESS_OUTPUT = new Set(["/dev/null", "/dev/stdout", "/dev/stderr", "&1", "&2", "&-"]);

/** Whether a redirection writes a file: `>`, `>>`, `>|`, `&>`, `<>`, `>&file`; not to /dev/null or another descriptor. */
export function writesFile(r: Redirect): boolean {
  if (/<<|^\d*<&?$/.test(r.op)) return false;
  const target = r.target;
  if (!target) return false;
  return target.expands || !HARMLESS_OUTPUT.has(target.value);
}
