/** Glob patterns as regular expressions: `*`, `?`, `**`, `[abc]`, `{a,b}` (the last only for find/grep globs). */

const escapeChar = (c: string) => c.replace(/[.+^${}()|[\]\\*?/]/g, "\\$&");

/** Regular-expression source for a glob; `/` separates path segments. */
export function globSource(glob: string, braces: boolean): string {
  let re = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*") {
      if (glob[i + 1] === "*") {
        const afterSlash = i === 0 || glob[i - 1] === "/";
        if (afterSlash && glob[i + 2] === "/") {
          re += "(?:.*/)?"; // `**/`: any number of directories, none included
          i += 2;
          continue;
        }
        if (afterSlash && i + 2 === glob.length) {
          re += ".*"; // trailing `/**`: everything below
          i += 1;
          continue;
        }
        i += 1; // `a**b` is `a*b`
      }
      re += "[^/]*";
    } else if (c === "?") {
      re += "[^/]";
    } else if (c === "[") {
      const close = glob.indexOf("]", i + 2);
      if (close < 0) {
        re += "\\[";
        continue;
      }
      let body = glob.slice(i + 1, close);
      if (body.startsWith("!") || body.startsWith("^")) body = "^" + body.slice(1);
      re += `[${body.replace(/\\(?!\])/g, "\\\\")}]`;
      i = close;
    } else if (c === "{" && braces) {
      let depth = 0;
      let close = -1;
      for (let j = i; j < glob.length; j++) {
        if (glob[j] === "{") depth++;
        else if (glob[j] === "}" && --depth === 0) {
          close = j;
          break;
        }
      }
      if (close < 0) {
        re += "\\{";
        continue;
      }
      const alternatives: string[] = [];
      let start = i + 1;
      depth = 0;
      for (let j = i + 1; j < close; j++) {
        if (glob[j] === "{") depth++;
        else if (glob[j] === "}") depth--;
        else if (glob[j] === "," && depth === 0) {
          alternatives.push(glob.slice(start, j));
          start = j + 1;
        }
      }
      alternatives.push(glob.slice(start, close));
      re += `(?:${alternatives.map((a) => globSource(a, true)).join("|")})`;
      i = close;
    } else if (c === "\\" && i + 1 < glob.length) {
      re += escapeChar(glob[++i]!);
    } else {
      re += escapeChar(c);
    }
  }
  return re;
}

/**
 * A path filter for find and grep: a glob with a `/` matches the path relative to the search
 * directory (`src/*.ts`, `**\/test/*.ts`); one without matches the file name at any depth (`*.ts`).
 * A trailing `/` matches directories only.
 */
export function globMatcher(pattern: string): (rel: string, isDir: boolean) => boolean {
  let p = pattern.trim();
  while (p.startsWith("./")) p = p.slice(2);
  const dirOnly = p.endsWith("/") && p.length > 1;
  if (dirOnly) p = p.slice(0, -1);
  const anchored = p.includes("/");
  if (p.startsWith("/")) p = p.slice(1);
  const re = new RegExp(`^${globSource(p, true)}$`);
  return (rel, isDir) => {
    if (dirOnly && !isDir) return false;
    return re.test(anchored ? rel : rel.slice(rel.lastIndexOf("/") + 1));
  };
}
