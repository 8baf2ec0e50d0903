/**
 * context-files: project instructions. The user's files (`$COIL_HOME/AGENTS.md`, `~/.claude/CLAUDE.md`,
 * `~/.codex/AGENTS.md`, `~/.pi/agent/AGENTS.md`), then in each folder from the repository root (the
 * filesystem root outside a repository) down to the working directory: `AGENTS.override.md` or
 * `AGENTS.md`, `CLAUDE.md` (both when they differ), `.claude/CLAUDE.md`, `.claude/rules/*.md`,
 * `CLAUDE.local.md`; the `compat` option gates the Claude Code, Codex/`.agents` and Pi ones. `@path`
 * imports are expanded. The `context-files` service hands them to the system-prompt plugin; they are
 * read at start-up and again at most once per run, with a size cap and a visible truncation note.
 * Instructions in folders below the working directory are added to the result of the first read, edit
 * or write of a file there, so the system prompt stays the same (docs/context.md).
 */
import { statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, relative, resolve } from "node:path";
import { Type, definePlugin, type TextContent } from "../../kernel/index.js";
import { CompatOption, compatOf, contextFilePatterns, type Compat } from "../../lib/compat.js";
import { addDoctorSection } from "../../lib/doctor.js";
import { coilHome } from "../../lib/paths.js";
import type {} from "../skills/api.js"; // types the `skills` service (its `compat` is the shared setting)
import type { ContextFile, ContextPlace } from "./api.js";
import { expandImports, folderChain, folderPlaces, readIfFile, realOf, userPlaces, type Place } from "./files.js";

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

export default definePlugin({
  id: "context-files",
  description: "AGENTS.md / CLAUDE.md project instructions",
  options: ContextFilesOptions,
  setup(ctx) {
    const o = ctx.options as typeof ctx.options & { compat?: Partial<Compat> };
    const userHome = process.env.HOME || homedir();
    const cwd = resolve(ctx.cwd);
    const chain = folderChain(cwd);
    const compat = () => compatOf(o.compat, ctx.services.get("skills")?.compat);
    const cache = new Map<string, { key: string; text: string | undefined }>();

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

    /** Load the places in order; a file with the same real path or the same text as one already loaded is skipped. */
    const load = (places: readonly Place[], loaded: Loaded[], report: ContextPlace[]): Loaded[] => {
      const fresh: Loaded[] = [];
      for (const place of places) {
        const text = read(place.path);
        if (text === undefined) continue;
        const real = realOf(place.path);
        const same = loaded.find((l) => realOf(l.place.path) === real);
        if (same) {
          report.push({
            path: place.path,
            status: "skipped",
            reason: `same file as ${same.place.path} (a link); loaded once`,
          });
          continue;
        }
        const twin = loaded.find((l) => read(l.place.path) === text);
        if (twin) {
          report.push({ path: place.path, status: "skipped", reason: `same text as ${twin.place.path}; loaded once` });
          continue;
        }
        const expanded = expandImports(place.path, text, userHome, read);
        report.push({
          path: place.path,
          status: "loaded",
          ...(expanded.notes.length ? { reason: expanded.notes.join("; ") } : {}),
        });
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

    let built: { files: ContextFile[]; report: ContextPlace[] } | undefined;
    const build = () => {
      const c = compat();
      const report: ContextPlace[] = [];
      const places = [
        ...userPlaces(coilHome(), userHome, o.names, c, o.home),
        ...chain.flatMap((dir) => folderPlaces(dir, o.names, c)),
      ];
      const unique = places.filter((p, i) => places.findIndex((q) => q.path === p.path) === i);
      const loaded = load(unique, [], report);
      // The nearest files matter most: give them the budget first, then show them in order.
      let budget = o.maxBytesTotal;
      const kept = new Map<Loaded, ContextFile>();
      for (const l of [...loaded].reverse()) {
        const file = capped(l, Math.max(0, Math.min(o.maxBytesPerFile, budget)));
        kept.set(l, file);
        budget -= Math.min(Buffer.byteLength(l.text), Math.max(0, Math.min(o.maxBytesPerFile, budget)));
      }
      return { files: loaded.map((l) => kept.get(l)!), report };
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
          for (const d of dirs) {
            if (nestedSeen.has(d)) continue;
            nestedSeen.add(d);
            const fresh = load(folderPlaces(d, o.names, compat()), loaded, nestedReport);
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
        return lines.join("\n");
      },
    });
  },
});
