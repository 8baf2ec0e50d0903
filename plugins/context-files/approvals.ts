/**
 * Your answers about instruction-file imports from outside a project, kept in `$COIL_HOME/imports.json`
 * per project root (as Claude Code remembers its answer per project): the files approved and the files
 * declined. A file not in either list is asked about (or, with no one to ask, left out with a notice).
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

interface Store {
  version: 1;
  projects: Record<string, { approved?: string[]; declined?: string[] }>;
}

export type Answer = "approved" | "declined" | undefined;

export class ImportApprovals {
  constructor(
    private readonly home: string,
    private readonly project: string,
  ) {}

  get file(): string {
    return join(this.home, "imports.json");
  }

  private load(): Store {
    try {
      const s = JSON.parse(readFileSync(this.file, "utf8")) as Store;
      return s && typeof s === "object" && s.projects && typeof s.projects === "object"
        ? s
        : { version: 1, projects: {} };
    } catch {
      return { version: 1, projects: {} };
    }
  }

  answer(real: string): Answer {
    const p = this.load().projects[this.project];
    if (p?.approved?.includes(real)) return "approved";
    if (p?.declined?.includes(real)) return "declined";
    return undefined;
  }

  /** Every answer for this project. */
  answers(): { approved: string[]; declined: string[] } {
    const p = this.load().projects[this.project];
    return { approved: p?.approved ?? [], declined: p?.declined ?? [] };
  }

  /** Record `answer` for these files (undefined forgets them). */
  set(files: readonly string[], answer: Answer): void {
    const store = this.load();
    const p = store.projects[this.project] ?? {};
    const without = (l: string[] | undefined) => (l ?? []).filter((f) => !files.includes(f));
    p.approved = without(p.approved);
    p.declined = without(p.declined);
    if (answer) p[answer] = [...p[answer]!, ...files];
    store.projects[this.project] = p;
    mkdirSync(dirname(this.file), { recursive: true });
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(store, null, 2)}\n`, { mode: 0o600 });
    renameSync(tmp, this.file);
  }
}
