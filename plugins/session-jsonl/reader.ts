/**
 * Streaming a session file: lines are read in 1 MiB chunks and parsed one at a time, so memory
 * holds the parsed entries, never the whole file as text. A torn last line (a crash mid-write) or a
 * corrupt line is reported with its line number and skipped; every valid line is still used.
 */
import {
  FORMAT_VERSION,
  entryProblem,
  migrateEntry,
  migrationState,
  type SessionEntry,
  type SessionHeader,
} from "./format.js";
import type { SessionOps } from "./file-system.js";

const CHUNK = 1 << 20;

export interface ReadResult {
  header: SessionHeader;
  /** Valid entries in file order (migrated to the current shape). */
  entries: SessionEntry[];
  /** One line per skipped or repaired line, naming the file and line number. */
  warnings: string[];
  /** The format version the file was written in. */
  version: number;
  /** The file does not end with a newline (a torn last write): the next append must start with one. */
  endsTorn: boolean;
  /** Size in bytes when read. */
  size: number;
}

/**
 * Call `onLine(text, lineNumber, isLast)` for every line until it returns `false`; `isLast` marks a
 * final line without "\n".
 */
export function forEachLine(
  ops: SessionOps,
  file: string,
  onLine: (text: string, line: number, unterminated: boolean) => unknown,
): { size: number; endsTorn: boolean } {
  const fd = ops.openSync(file, "r");
  try {
    const buffer = Buffer.allocUnsafe(CHUNK);
    let carry: Buffer | undefined;
    let position = 0;
    let line = 0;
    for (;;) {
      const n = ops.readSync(fd, buffer, 0, CHUNK, position);
      if (n <= 0) break;
      position += n;
      let start = 0;
      for (;;) {
        const nl = buffer.indexOf(10, start);
        if (nl === -1 || nl >= n) break;
        line++;
        const text = carry
          ? Buffer.concat([carry, buffer.subarray(start, nl)]).toString("utf8")
          : buffer.toString("utf8", start, nl);
        carry = undefined;
        if (onLine(text, line, false) === false) return { size: position, endsTorn: false };
        start = nl + 1;
      }
      if (start < n)
        carry = carry ? Buffer.concat([carry, buffer.subarray(start, n)]) : Buffer.from(buffer.subarray(start, n));
    }
    if (carry && carry.length > 0) onLine(carry.toString("utf8"), line + 1, true);
    return { size: position, endsTorn: Boolean(carry && carry.length > 0) };
  } finally {
    ops.closeSync(fd);
  }
}

/** Read and migrate a whole session file. Throws only when the file cannot be opened or has no header. */
export function readSession(ops: SessionOps, file: string): ReadResult {
  const entries: SessionEntry[] = [];
  const warnings: string[] = [];
  let header: SessionHeader | undefined;
  let migration: ReturnType<typeof migrationState> | undefined;
  let version = FORMAT_VERSION;
  const seen = new Set<string>();
  const { size, endsTorn } = forEachLine(ops, file, (text, line, unterminated) => {
    if (text.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      warnings.push(
        unterminated
          ? `${file}:${line}: the last line is incomplete (coil was probably stopped while writing it); skipped`
          : `${file}:${line}: not valid JSON; line skipped`,
      );
      return;
    }
    if (!header) {
      const h = value as Partial<SessionHeader>;
      if (h && typeof h === "object" && h.type === "session" && typeof h.id === "string") {
        version = typeof h.version === "number" ? h.version : 1;
        header = { ...h, version } as SessionHeader;
        if (version < FORMAT_VERSION) migration = migrationState(version);
        return;
      }
      // The header line itself was lost: keep the entries under a header made from the file name.
      warnings.push(`${file}:${line}: expected the session header before this line; using one made from the file name`);
      header = {
        type: "session",
        version: FORMAT_VERSION,
        id: idFromFileName(file),
        timestamp: new Date(0).toISOString(),
        cwd: "",
      };
    }
    let entry: unknown = value;
    if (migration && value && typeof value === "object") {
      const migrated = migrateEntry(value as Record<string, unknown>, migration, line);
      if (typeof migrated === "string") {
        warnings.push(`${file}:${line}: cannot migrate from format ${version}: ${migrated}; line skipped`);
        return;
      }
      entry = migrated;
    }
    const problem = entryProblem(entry);
    if (problem) {
      warnings.push(`${file}:${line}: ${problem}; line skipped`);
      return;
    }
    const e = entry as SessionEntry;
    if (seen.has(e.id)) {
      warnings.push(`${file}:${line}: duplicate entry id '${e.id}'; line skipped`);
      return;
    }
    seen.add(e.id);
    entries.push(e);
  });
  if (!header) {
    throw Object.assign(new Error(`${file} is not a coil session file (no session header line)`), {
      code: "SESSION_INVALID",
    });
  }
  return { header, entries, warnings, version, endsTorn, size };
}

const UUID = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/i;

function idFromFileName(file: string): string {
  return UUID.exec(file)?.[1] ?? file.replace(/^.*[\\/]/, "").replace(/\.jsonl$/, "");
}

/** Just the header (first line), or undefined when the file does not start with one. */
export function readHeader(ops: SessionOps, file: string): SessionHeader | undefined {
  let header: SessionHeader | undefined;
  try {
    forEachLine(ops, file, (text) => {
      try {
        const h = JSON.parse(text) as SessionHeader;
        if (h && h.type === "session" && typeof h.id === "string")
          header = { ...h, version: typeof h.version === "number" ? h.version : 1 };
      } catch {
        // not a header
      }
      return false;
    });
  } catch {
    return undefined;
  }
  return header;
}
