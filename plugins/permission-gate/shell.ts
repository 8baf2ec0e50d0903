/**
 * Split a shell command into the simple commands it runs, so that a rule allowing `git status` never
 * approves the `rm -rf ~` after `&&`. Separators: `&&`, `||`, `;`, `|`, `|&`, `&` and newlines.
 * Subshells `( … )`, command substitutions `$( … )` and backticks, and process substitutions
 * `<( … )`/`>( … )` are split recursively; their contents count as commands of their own (also
 * inside double quotes, where the shell still runs them). Single quotes and backslashes are respected.
 * Variable assignments in front of a command stay part of it (see `normalize`).
 * This is a conservative reading for permission checks, not a full shell parser.
 */

/** Leading words that introduce a command without being one. */
const PREFIX_WORDS = new Set(["if", "then", "else", "elif", "do", "while", "until", "!", "{", "time"]);
/** Segments that are only a closing keyword. */
const CLOSERS = new Set(["fi", "done", "}", "esac", "then", "else", "do"]);
/** What a substitution leaves in the command around it (its commands are checked on their own). */
const SUBST = "$(…)";
/** A segment of redirections only, e.g. after a subshell: `(…) > log 2>&1`. */
const REDIRECTS_ONLY = /^(?:&?\d*(?:>>|>\||<<<?|<>|[<>])&?\s*[^\s<>]+\s*)+$/;
/** Loop and case headers are not commands (substitutions in them are checked separately). */
const HEADER = /^(?:for|select|case)\s/;
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=(?:'[^']*'|"(?:[^"\\]|\\.)*"|[^\s'"])*\s+/;

export function splitCommand(command: string): string[] {
  const out: string[] = [];
  parseList(command, 0, undefined, out);
  return out;
}

/** Parse commands from `i` until `close` (or the end); pushes every simple command to `out`; returns the index after `close`. */
function parseList(s: string, i: number, close: ")" | "`" | undefined, out: string[]): number {
  let cur = "";
  const flush = () => {
    const cmd = normalize(cur);
    if (cmd) out.push(cmd);
    cur = "";
  };
  while (i < s.length) {
    const c = s[i]!;
    const next = s[i + 1];
    if (c === close) {
      flush();
      return i + 1;
    }
    if (c === "\\") {
      cur += s.slice(i, i + 2);
      i += 2;
    } else if (c === "'") {
      const end = s.indexOf("'", i + 1);
      const stop = end < 0 ? s.length : end + 1;
      cur += s.slice(i, stop);
      i = stop;
    } else if (c === '"') {
      cur += c;
      i++;
      while (i < s.length && s[i] !== '"') {
        if (s[i] === "\\") {
          cur += s.slice(i, i + 2);
          i += 2;
        } else if (s[i] === "$" && s[i + 1] === "(" && s[i + 2] !== "(") {
          i = parseList(s, i + 2, ")", out);
          cur += SUBST;
        } else if (s[i] === "`") {
          i = parseList(s, i + 1, "`", out);
          cur += SUBST;
        } else cur += s[i++];
      }
      if (i < s.length) {
        cur += '"';
        i++;
      }
    } else if (c === "$" && next === "(" && s[i + 2] === "(") {
      const end = s.indexOf("))", i + 3); // arithmetic: no commands inside
      const stop = end < 0 ? s.length : end + 2;
      cur += s.slice(i, stop);
      i = stop;
    } else if ((c === "$" || c === "<" || c === ">") && next === "(") {
      i = parseList(s, i + 2, ")", out);
      cur += c === "$" ? SUBST : `${c}${SUBST.slice(1)}`;
    } else if (c === "`") {
      i = parseList(s, i + 1, "`", out);
      cur += SUBST;
    } else if (c === "(") {
      // A subshell (or a group after a keyword): its commands stand on their own.
      flush();
      i = parseList(s, i + 1, ")", out);
    } else if (c === "#" && (cur === "" || /\s$/.test(cur))) {
      const end = s.indexOf("\n", i);
      i = end < 0 ? s.length : end;
    } else if (c === ";" || c === "\n" || (c === "|" && !/[<>]$/.test(cur))) {
      flush();
      i += c === "|" && (next === "|" || next === "&") ? 2 : c === ";" && next === ";" ? 2 : 1;
    } else if (c === "&") {
      if (next === "&") {
        flush();
        i += 2;
      } else if (next === ">" || /[<>]$/.test(cur)) {
        cur += c; // a redirection: &> file, 2>&1
        i++;
      } else {
        flush(); // background: the next command still runs
        i++;
      }
    } else {
      cur += c;
      i++;
    }
  }
  flush();
  return i;
}

/**
 * Collapse whitespace and drop leading keywords; empty when nothing runs. Variable assignments stay: they
 * change what the command does (`PATH=.:$PATH ls`), so they are part of what is judged. An assignment on
 * its own (`F=~/.ssh/id_rsa`) is kept too: path rules look at its words.
 */
function normalize(text: string): string {
  let cmd = text.replace(/\s+/g, " ").trim();
  for (;;) {
    const word = cmd.split(" ")[0]!;
    if (!PREFIX_WORDS.has(word)) break;
    cmd = cmd.slice(word.length).trim();
  }
  return CLOSERS.has(cmd) || REDIRECTS_ONLY.test(cmd) || HEADER.test(cmd) ? "" : cmd;
}

/**
 * The command without the assignments (and keywords) in front: `FOO=1 rm -rf x` is `rm -rf x`, so a deny
 * or ask rule for `rm *` still catches it. Allow rules match the command as written, assignments included.
 */
export function withoutAssignments(command: string): string {
  let cmd = command;
  for (;;) {
    const word = cmd.split(" ")[0]!;
    if (PREFIX_WORDS.has(word)) cmd = cmd.slice(word.length).trim();
    else if (ASSIGNMENT.test(`${cmd} `)) cmd = `${cmd} `.replace(ASSIGNMENT, "").trim();
    else return cmd;
  }
}
