/**
 * Pi's settings files, `~/.pi/agent/settings.json` (`$PI_CODING_AGENT_DIR`) and `.pi/settings.json` at
 * the project root (a trusted project's only; its keys win over the global file's, as in Pi), read
 * for what coil has a place for: `defaultProvider` + `defaultModel` (the model a run starts with when
 * nothing else names one), `defaultThinkingLevel`, and the `skills` and `prompts` paths (relative to the
 * file's folder, `~` allowed). Everything else is listed as not read, key by key, for `coil doctor` and
 * docs/migrating.md: coil never refuses to start over Pi's file.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { piAgentDir, projectRoot, userHome } from "./locations.js";

export interface PiSettingsFile {
  file: string;
  scope: "user" | "project";
  /** False when it exists but was not read (an untrusted project's, or not valid JSON), with why. */
  read: boolean;
  why?: string;
}

export interface PiPath {
  /** Absolute. */
  path: string;
  /** As written, and the file it is written in. */
  written: string;
  file: string;
  scope: "user" | "project";
}

export interface PiSettings {
  /** The settings files that exist. */
  files: PiSettingsFile[];
  /** `provider/model` from `defaultProvider` + `defaultModel`, and the file that set them. */
  defaultModel?: { spec: string; file: string };
  defaultThinkingLevel?: { level: string; file: string };
  skills: PiPath[];
  prompts: PiPath[];
  /** `key: why` for everything else in the files (and for entries of `skills`/`prompts` coil cannot use). */
  notRead: string[];
  /** `key: who` for keys another plugin reads (Pi's extensions and packages: pi-extensions). */
  elsewhere: string[];
}

/** Pi's provider ids that coil names otherwise. */
const PROVIDER_IDS: Record<string, string> = { google: "gemini" };
const THINKING = ["off", "minimal", "low", "medium", "high", "xhigh"];
/** Settings coil reads; every other key of the file is listed as not read. */
const READ_KEYS = new Set(["defaultProvider", "defaultModel", "defaultThinkingLevel", "skills", "prompts"]);

const memo = new Map<string, { stamp: string; value: PiSettings }>();

const stampOf = (files: string[]) =>
  files
    .map((f) => {
      try {
        const st = statSync(f);
        return `${f}:${st.size}:${st.mtimeMs}`;
      } catch {
        return `${f}:-`;
      }
    })
    .join("|");

/** Read Pi's settings as they apply to `cwd` (the project file only when `trusted`). Cached until a file changes. */
export function readPiSettings(o: { cwd: string; trusted: boolean; env?: NodeJS.ProcessEnv }): PiSettings {
  const env = o.env ?? process.env;
  const globalFile = join(piAgentDir(env), "settings.json");
  // At the project root, whose files project trust covers (Pi reads the working directory's).
  const projectFile = join(projectRoot(o.cwd), ".pi", "settings.json");
  const key = `${globalFile}|${projectFile}|${o.trusted}`;
  const stamp = stampOf([globalFile, projectFile]);
  const hit = memo.get(key);
  if (hit?.stamp === stamp) return hit.value;
  const value = read(globalFile, projectFile === globalFile ? undefined : projectFile, o.trusted, userHome(env));
  memo.set(key, { stamp, value });
  return value;
}

function read(globalFile: string, projectFile: string | undefined, trusted: boolean, userHome: string): PiSettings {
  const out: PiSettings = { files: [], skills: [], prompts: [], notRead: [], elsewhere: [] };
  const layers: { file: string; scope: "user" | "project"; data: Record<string, unknown> }[] = [];
  for (const [file, scope] of [
    [globalFile, "user"],
    [projectFile, "project"],
  ] as const) {
    if (!file || !existsSync(file)) continue;
    if (scope === "project" && !trusted) {
      out.files.push({ file, scope, read: false, why: "the project is not trusted (coil trust)" });
      continue;
    }
    let data: unknown;
    try {
      data = JSON.parse(readFileSync(file, "utf8"));
    } catch (error) {
      out.files.push({ file, scope, read: false, why: `not valid JSON: ${(error as Error).message}` });
      continue;
    }
    if (!data || typeof data !== "object" || Array.isArray(data)) {
      out.files.push({ file, scope, read: false, why: "not a JSON object" });
      continue;
    }
    out.files.push({ file, scope, read: true });
    layers.push({ file, scope, data: data as Record<string, unknown> });
  }
  // The project's keys win over the global ones (Pi's rule); paths add up, each relative to its own file.
  let provider: { value: string; file: string } | undefined;
  let model: { value: string; file: string } | undefined;
  for (const { file, scope, data } of layers) {
    for (const [k, v] of Object.entries(data)) {
      const where = `${k} (${file})`;
      if (k === "defaultProvider" && typeof v === "string" && v) provider = { value: v, file };
      else if (k === "defaultModel" && typeof v === "string" && v) model = { value: v, file };
      else if (k === "defaultThinkingLevel" && typeof v === "string" && THINKING.includes(v))
        out.defaultThinkingLevel = { level: v, file };
      else if ((k === "skills" || k === "prompts") && Array.isArray(v)) {
        for (const entry of v) {
          const p = pathEntry(entry, file, scope, userHome);
          if (typeof p === "string") out.notRead.push(`${k}: ${JSON.stringify(entry)} (${file}): ${p}`);
          else out[k].push(p);
        }
      } else if (READ_KEYS.has(k)) out.notRead.push(`${where}: ${JSON.stringify(v)} is not a value coil can use`);
      else if (ELSEWHERE[k]) out.elsewhere.push(`${where}: ${ELSEWHERE[k]}`);
      else out.notRead.push(`${where}: ${WHY[k] ?? "Pi's own setting; coil has no counterpart"}`);
    }
  }
  if (provider && model) {
    const id = PROVIDER_IDS[provider.value] ?? provider.value;
    out.defaultModel = { spec: `${id}/${model.value}`, file: model.file };
  } else if (provider || model)
    out.notRead.push(
      `${provider ? "defaultProvider" : "defaultModel"} (${(provider ?? model)!.file}): coil needs both defaultProvider and defaultModel`,
    );
  return out;
}

/** Keys this reader leaves to another plugin, and what that plugin does with them. */
const ELSEWHERE: Record<string, string> = {
  packages:
    "the pi-extensions plugin loads the packages' extensions (docs/pi-extensions.md); their skills, prompts and themes are not read",
  extensions: "the pi-extensions plugin loads them (docs/pi-extensions.md)",
};

/** Why a key coil does not read is not read, where coil has another way to do it. */
const WHY: Record<string, string> = {
  themes: "coil's TUI has its own theme (docs/tui.md)",
  theme: "coil's TUI has its own theme (docs/tui.md)",
  compaction: "the compaction-summary plugin's options and the preset's reserveTokens (docs/context.md)",
  retry: "the provider plugins retry on their own (docs/providers.md)",
  enabledModels: "coil's /model lists every configured model",
  enableSkillCommands: "coil always registers /skill:name",
  sessionDir: "coil keeps its sessions in $COIL_HOME/sessions (docs/sessions.md)",
  shellPath: "the tools-coding option bash.shell",
  shellCommandPrefix: "not supported",
};

function pathEntry(entry: unknown, file: string, scope: "user" | "project", userHome: string): PiPath | string {
  if (typeof entry !== "string" || !entry) return "not a path";
  if (/^[!+-]/.test(entry) || /[*?[\]{}]/.test(entry))
    return "glob patterns and !/+/- filters are not read; name the folder or file itself";
  const path = resolve(dirname(file), entry.replace(/^~(?=$|\/)/, userHome));
  return { path, written: entry, file, scope };
}
