/**
 * context-files: project instructions. The user's files (`$COIL_HOME/AGENTS.md`, `~/.claude/CLAUDE.md`,
 * `~/.codex/AGENTS.md`, `~/.pi/agent/AGENTS.md`), then in each folder from the repository root (the
 * filesystem root outside a repository) down to the working directory: `AGENTS.override.md` or
 * `AGENTS.md`, `CLAUDE.md` (both when they differ), `.claude/CLAUDE.md`, `.claude/rules/*.md`,
 * `CLAUDE.local.md`; the `compat` option gates the Claude Code, Codex/`.agents` and Pi ones. `@path`
 * imports are expanded, each file once (one already in the context is not repeated); a file the permission
 * gate's deny rules cover is never read, and a project file's import from outside the project needs your
 * approval once (remembered per project in `$COIL_HOME/imports.json`). The `context-files` service hands them to the system-prompt plugin; they are
 * read at start-up and again at most once per run, with a size cap and a visible truncation note.
 * Instructions in folders below the working directory are added to the result of the first read, edit
 * or write of a file there, so the system prompt stays the same (docs/context.md).
 */
import { statSync } from "node:fs";
import { dirname, isAbsolute, relative, resolve } from "node:path";
import { Type, definePlugin, type TextContent } from "../../api/index.js";
import { CompatOption, compatOf, contextFilePatterns, type Compat } from "../../lib/compat.js";
import { addDoctorSection } from "../../lib/doctor.js";
import type {} from "../permission-gate/api.js"; // types the `permissions` service (deny rules, the project)
import type {} from "../skills/api.js"; // types the `skills` service (its `compat` is the shared setting)
import type { ContextFile, ContextPlace } from "./api.js";
import { ImportApprovals } from "./approvals.js";
import {
  expandImports,
  folderChain,
  folderPlaces,
  readIfFile,
  realOf,
  userPlaces,
  type ImportCheck,
  type Place,
} from "./files.js";
import { locationsOf } from "../../lib/locations.js";

export type { ContextFile, ContextFilesService, ContextPlace } from "./api.js";
export { folderChain, importsOf, expandImports } from "./files.js";

export const ContextFilesOptions = Type.Object({
  /** File names read in each folder; when several exist and differ, all load (identical ones once). */
  names: Type.Array(Type.String({ minLength: 1 }), { default: ["AGENTS.md", "CLAUDE.md"], minItems: 1 }),
  /** Also read the file in `$COIL_HOME` (your own instructions for every project). */
  home: Type.Boolean({ default: true }),
  /** Bytes kept of one file (with its imports). */
  maxBytesPerFile: Type.Integer({ minimum: 256, default: 32_768 }),
  /** Bytes kept of all files together; the files nearest the working directory get the budget first. */
  maxBytesTotal: Type.Integer({ minimum: 256, default: 98_304 }),
  /** Other tools' files (`claude`, `pi`, `agents`); unset keys follow the skills plugin's `compat`, else on. */
  compat: Type.Optional(CompatOption),
  /** Instructions in folders below the working directory join the first read/edit/write result there. */
  nested: Type.Boolean({ default: true }),
});

/** Tools whose `path` argument names a file the agent reads or edits. */
const FILE_TOOLS = ["read", "edit", "write"];
/** How a nested folder's instructions start in a tool result (also how a resumed session's are recognised). */
const NESTED_MARK = "[coil: instructions for ";

interface Loaded {
  place: Place;
  text: string;
  bytes: number;
}

/** The answers of the question about outside imports. */
const IMPORT_CHOICES = ["Import them (remembered for this project)", "Do not import them (remembered)"] as const;

const within = (root: string, p: string) => {
  const rel = relative(root, p);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
};

export default definePlugin({
  id: "context-files",
  description: "AGENTS.md / CLAUDE.md project instructions",
  options: ContextFilesOptions,
  setup(ctx) {
    const o = ctx.options as typeof ctx.options & { compat?: Partial<Compat> };
    const where = locationsOf(ctx);
    const userHome = where.home;
    const cwd = where.cwd;
    const chain = folderChain(cwd);
    const compat = () => compatOf(o.compat, ctx.services.get("skills")?.compat);
    const cache = new Map<string, { key: string; text: string | undefined }>();
    const root = where.projectRoot;
    const approvals = new ImportApprovals(where.coilHome, realOf(root));
    ctx.flags.register({
      name: "allow-imports",
      description:
        "import the @files that this project's CLAUDE.md/AGENTS.md name outside the project, and remember it",
      type: "boolean",
    });
    /** Said once per run: each import left out, naming the file and what to do. */
    const warned = new Set<string>();
    const warnOnce = (line: string) => {
      if (warned.has(line)) return;
      warned.add(line);
      ctx.log.warn(line);
    };
    const inProject = (real: string) => {
      const gate = ctx.services.get("permissions");
      return gate ? gate.inProject(real) : within(realOf(root), real) || within(realOf(cwd), real);
    };
    /** The deny rule that covers reading a file (by the path given or its real path), if any. */
    const denied = (path: string, real: string) => {
      const gate = ctx.services.get("permissions");
      return gate?.readDenied(path) ?? (real !== path ? gate?.readDenied(real) : undefined);
    };
    /**
     * Whether an import may be read: never a denied file; from a project file, a file outside the project
     * only once you approved it (your own files, `$COIL_HOME`'s and `~/.claude/CLAUDE.md`, import freely).
     */
    const checkFor =
      (place: Place): ImportCheck =>
      (target, real) => {
        const rule = denied(target, real);
        if (rule) {
          warnOnce(`${place.path} imports ${target}; not imported: the deny rule ${rule} covers it`);
          return { ok: false, reason: `the deny rule ${rule} covers it` };
        }
        if (place.kind === "user" || inProject(real)) return { ok: true };
        const answer = approvals.answer(real);
        if (answer === "approved") return { ok: true };
        if (answer === "declined")
          return {
            ok: false,
            reason: `it is outside the project and you declined importing it (${approvals.file}; run with --allow-imports to import it)`,
          };
        if (ctx.flags.get("allow-imports") === true) {
          approvals.set([real], "approved");
          return { ok: true };
        }
        // with someone to ask, the question comes before the request; else a notice now
        if (!ctx.services.get("ui"))
          warnOnce(
            `${place.path} imports ${target}, outside the project; not imported: approve it when coil asks (TUI, ACP, RPC), or run once with --allow-imports (remembered for ${root})`,
          );
        return { ok: false, reason: "it is outside the project and not approved yet", pending: true };
      };

    /** A file's text, re-read only when its size or modification time changed. */
    const read = (path: string): string | undefined => {
      let key: string;
      try {
        const st = statSync(path);
        key = st.isFile() ? `${st.size}:${st.mtimeMs}` : "not a file";
      } catch {
        key = "missing";
      }
      const hit = cache.get(path);
      if (hit?.key === key) return hit.text;
      const text = key === "missing" || key === "not a file" ? undefined : readIfFile(path);
      cache.set(path, { key, text });
      return text;
    };

    /**
     * Load the places in order; a file with the same real path or the same text as one already loaded, or
     * already imported by one (`seen`), is skipped; so is one a deny rule covers (a link to a key, say).
     */
    const load = (
      places: readonly Place[],
      loaded: Loaded[],
      report: ContextPlace[],
      seen: Map<string, string>,
      pending: Set<string>,
    ): Loaded[] => {
      const fresh: Loaded[] = [];
      for (const place of places) {
        const real = realOf(place.path);
        const rule = denied(place.path, real);
        if (rule) {
          if (read(place.path) !== undefined) {
            report.push({ path: place.path, status: "skipped", reason: `the deny rule ${rule} covers it` });
            warnOnce(`${place.path} not loaded: the deny rule ${rule} covers it`);
          }
          continue;
        }
        const text = read(place.path);
        if (text === undefined) continue;
        const same = loaded.find((l) => realOf(l.place.path) === real);
        if (same) {
          report.push({
            path: place.path,
            status: "skipped",
            reason: `same file as ${same.place.path} (a link); loaded once`,
          });
          continue;
        }
        const importer = seen.get(real);
        if (importer !== undefined && importer !== place.path) {
          report.push({ path: place.path, status: "skipped", reason: `imported by ${importer}; loaded once` });
          continue;
        }
        const twin = loaded.find((l) => read(l.place.path) === text);
        if (twin) {
          report.push({ path: place.path, status: "skipped", reason: `same text as ${twin.place.path}; loaded once` });
          continue;
        }
        const expanded = expandImports(place.path, text, userHome, read, { seen, check: checkFor(place) });
        for (const p of expanded.pending) pending.add(p);
        const notes = [...expanded.notes, ...expanded.info];
        report.push({ path: place.path, status: "loaded", ...(notes.length ? { reason: notes.join("; ") } : {}) });
        const entry = { place, text: expanded.text, bytes: Buffer.byteLength(text) };
        loaded.push(entry);
        fresh.push(entry);
      }
      return fresh;
    };

    /** Cut a file's text to `limit` bytes with a note the model sees. */
    const capped = (l: Loaded, limit: number): ContextFile => {
      const buf = Buffer.from(l.text, "utf8");
      if (buf.length <= limit) return { path: l.place.path, content: l.text, truncated: false, bytes: l.bytes };
      const cut = buf
        .subarray(0, limit)
        .toString("utf8")
        .replace(/\uFFFD$/, "");
      const note = `[coil: ${l.place.path} is ${buf.length} bytes; only the first ${Buffer.byteLength(cut)} are shown (size cap). Read the file for the rest.]`;
      return { path: l.place.path, content: cut ? `${cut}\n\n${note}` : note, truncated: true, bytes: l.bytes };
    };

    let built:
      | { files: ContextFile[]; report: ContextPlace[]; seen: Map<string, string>; pending: Set<string> }
      | undefined;
    const build = () => {
      const c = compat();
      const report: ContextPlace[] = [];
      const seen = new Map<string, string>();
      const pending = new Set<string>();
      const places = [
        ...userPlaces(where.coilHome, userHome, o.names, c, o.home),
        ...chain.flatMap((dir) => folderPlaces(dir, o.names, c)),
      ];
      const unique = places.filter((p, i) => places.findIndex((q) => q.path === p.path) === i);
      const loaded = load(unique, [], report, seen, pending);
      // The nearest files matter most: give them the budget first, then show them in order.
      let budget = o.maxBytesTotal;
      const kept = new Map<Loaded, ContextFile>();
      for (const l of [...loaded].reverse()) {
        const file = capped(l, Math.max(0, Math.min(o.maxBytesPerFile, budget)));
        kept.set(l, file);
        budget -= Math.min(Buffer.byteLength(l.text), Math.max(0, Math.min(o.maxBytesPerFile, budget)));
      }
      return { files: loaded.map((l) => kept.get(l)!), report, seen, pending };
    };
    // Read at start-up, then at most once per run (at its first request), never once per turn: an edit
    // between prompts applies at the next prompt, and a run's prompt prefix stays the same.
    let stale = true;
    ctx.on("agent_start", () => {
      stale = true;
    });
    const current = () => {
      if (stale || !built) {
        stale = false;
        built = build();
      }
      return built;
    };

    /** Files asked about in this process (a dismissed question is not repeated until the next start). */
    const asked = new Set<string>();
    // Before the first request of a run (the system prompt is built after this), ask about the project
    // files' imports from outside the project that you have not answered for; the answer is remembered.
    // With no one to ask (print and json modes), they stay out with the notice checkFor gave.
    ctx.tap(
      "before_request",
      async (_request, turn) => {
        const ui = ctx.services.get("ui");
        const list = [...current().pending].filter((f) => !asked.has(f));
        if (!list.length || !ui) return undefined;
        for (const f of list) asked.add(f);
        const choice = await ui.select(
          `Project instructions import ${list.length === 1 ? "a file" : `${list.length} files`} from outside the project (${root}): ${list.join(", ")}. Import ${list.length === 1 ? "it" : "them"} into the model's context?`,
          IMPORT_CHOICES,
          turn.signal,
        );
        if (choice === IMPORT_CHOICES[0]) approvals.set(list, "approved");
        else if (choice === IMPORT_CHOICES[1]) approvals.set(list, "declined");
        else return undefined; // dismissed: left out this run, asked again next run
        built = undefined;
        return undefined;
      },
      { stage: "EARLY" },
    );

    // Folders below the working directory: their instructions join the result of the first file tool
    // call there (kept in the session, so a resumed session has them and does not get them twice).
    const nestedSeen = new Set<string>();
    const nestedReport: ContextPlace[] = [];
    const nestedNote = (dir: string, loaded: readonly Loaded[]) =>
      `${NESTED_MARK}${dir}/, which apply to work in that folder; loaded on first use]\n\n${loaded.map((l) => `## ${l.place.path}\n\n${capped(l, o.maxBytesPerFile).content.trim()}`).join("\n\n")}`;
    if (o.nested) {
      let scanned = false;
      ctx.tap(
        "before_request",
        (request) => {
          if (scanned) return undefined;
          scanned = true;
          for (const m of request.messages) {
            if (m.role !== "toolResult") continue;
            for (const part of m.content) {
              if (part.type !== "text") continue;
              for (const hit of part.text.matchAll(/\[coil: instructions for (.+?)\/, which apply/g))
                nestedSeen.add(hit[1]!);
            }
          }
          return undefined;
        },
        { stage: "EARLY" },
      );
      ctx.tap(
        "tool_result",
        (result, info) => {
          const given = info.args.path;
          if (typeof given !== "string" || !given) return undefined;
          const file = resolve(cwd, given.replace(/^~(?=\/|$)/, userHome));
          const rel = relative(cwd, dirname(file));
          if (!rel || rel.startsWith("..") || isAbsolute(rel)) return undefined;
          const dirs: string[] = [];
          for (let d = dirname(file); d !== cwd && d !== dirname(d); d = dirname(d)) dirs.unshift(d);
          const added: string[] = [];
          const above = current();
          const loaded: Loaded[] = above.files.map((f) => ({
            place: { path: f.path, kind: "project" },
            text: f.content,
            bytes: f.bytes,
          }));
          const seen = new Map(above.seen);
          for (const d of dirs) {
            if (nestedSeen.has(d)) continue;
            nestedSeen.add(d);
            // an outside import here is asked about at the next request, and imported from the next session on
            const fresh = load(folderPlaces(d, o.names, compat()), loaded, nestedReport, seen, above.pending);
            if (fresh.length) added.push(nestedNote(d, fresh));
          }
          if (!added.length) return undefined;
          const extra: TextContent[] = added.map((text) => ({ type: "text", text }));
          return { ...result, content: [...result.content, ...extra] };
        },
        { tools: FILE_TOOLS },
      );
    }

    const places = (): ContextPlace[] => [...current().report, ...nestedReport];
    ctx.services.provide("context-files", { files: () => current().files, places });
    addDoctorSection(ctx, {
      title: "context files",
      report() {
        stale = true;
        const c = compat();
        const lines = places().map(
          (p) => `${p.status === "loaded" ? "loaded" : "skipped"}: ${p.path}${p.reason ? `  (${p.reason})` : ""}`,
        );
        if (!lines.length) lines.push("none found");
        const off = (Object.keys(c) as (keyof Compat)[]).filter((k) => !c[k]);
        const patterns = contextFilePatterns(c, o.names);
        lines.push(
          `looked for: ${(o.home ? patterns.user : patterns.user.slice(1)).join(", ")}; then in each folder from ${chain[0]} down to ${cwd}: ${patterns.eachFolder.join(", ")}`,
        );
        if (off.length) lines.push(`compat off: ${off.join(", ")}`);
        if (o.nested)
          lines.push("folders below the working directory: their files load with the first read/edit/write there");
        const answers = approvals.answers();
        if (answers.approved.length)
          lines.push(`imports from outside the project you approved: ${answers.approved.join(", ")}`);
        if (answers.declined.length)
          lines.push(`imports from outside the project you declined: ${answers.declined.join(", ")}`);
        if (answers.approved.length || answers.declined.length)
          lines.push(`(kept in ${approvals.file}; delete the project's entry to be asked again)`);
        return lines.join("\n");
      },
    });
  },
});
