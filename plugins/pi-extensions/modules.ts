/**
 * The module names a Pi extension imports, served by this plugin's loader so the import lines work
 * unchanged: `@mariozechner/pi-coding-agent` and `@earendil-works/pi-coding-agent` (the helpers an
 * extension calls at run time: event type guards, output truncation, `getAgentDir`, `parseFrontmatter`...), `@mariozechner/pi-ai` (`StringEnum`), pi-tui under both names (coil's own
 * copy, bound once it has loaded), and `typebox` / `@sinclair/typebox` (coil's TypeBox; its compiler and value
 * functions bound once loaded, when the runtime starts). A name an
 * extension imports that coil does not have is a stub: calling it throws an error naming it, and the call
 * is reported for that extension.
 */
import { homedir } from "node:os";
import * as typebox from "typebox";
import { Type } from "typebox";
import { splitFrontMatter } from "../../lib/front-matter.js";
import { piAgentDir } from "../../lib/locations.js";
import { piAiStreaming } from "./providers.js";
import type { PiBashOperations } from "./shell.js";

export type Report = (call: string, why: string) => void;

/** Thrown by pi-tui's binding when an extension uses pi-tui while it loads, before coil loaded pi-tui. */
export class PiTuiNotReady extends Error {
  constructor(name: string) {
    super(`pi-tui's ${name} was used while the extension loaded`);
  }
}

const SKIP = new Set(["then", "default", "__esModule", "toJSON", "constructor"]);
/** What a stub answers as the function it is (`class X extends Stub`, `instanceof`, printing it). */
const FUNCTION_MEMBERS = new Set(["prototype", "name", "length", "toString", "call", "apply", "bind", "then"]);

/** A module object: `known` as it is, any other name a stub that reports and throws when used. */
function moduleOf(specifier: string, known: Record<string, unknown>, report: () => Report): object {
  const stubs = new Map<string, unknown>();
  return new Proxy(known, {
    has: (target, key) => typeof key === "string" && (key in target || !SKIP.has(key)),
    get(target, key) {
      if (key === "__esModule") return true;
      if (typeof key !== "string") return undefined;
      if (key in target) return target[key];
      if (SKIP.has(key)) return undefined;
      let stub = stubs.get(key);
      if (!stub) {
        const fail = () => {
          report()(`${key} (${specifier})`, "coil's Pi API has no counterpart");
          throw new Error(`${key} from ${specifier} is not available in coil (docs/pi-extensions.md)`);
        };
        // A class or namespace is reached through its members too (`ModelRuntime.create()`,
        // `SessionManager.inMemory()`): those fail the same way, not with "... is not a function".
        stub = new Proxy(
          function unavailable() {
            return fail();
          },
          {
            get: (fn, member, receiver) =>
              typeof member === "symbol" || FUNCTION_MEMBERS.has(member) ? Reflect.get(fn, member, receiver) : fail(),
          },
        );
        stubs.set(key, stub);
      }
      return stub;
    },
  });
}

const queues = new Map<string, Promise<unknown>>();

/** Pi's per-file mutation queue: calls for one path run one after another. */
function withFileMutationQueue<T>(path: string, fn: () => Promise<T>): Promise<T> {
  const previous = queues.get(path) ?? Promise.resolve();
  const next = previous.then(fn, fn);
  const settled = next.catch(() => undefined);
  queues.set(path, settled);
  void settled.then(() => {
    if (queues.get(path) === settled) queues.delete(path);
  });
  return next;
}

const toolIs = (name: string) => (event: { toolName?: string }) => event?.toolName === name;

const DEFAULT_MAX_BYTES = 50 * 1024;
const DEFAULT_MAX_LINES = 2000;

/** Pi's `formatSize`: bytes as `512B`, `1.5KB`, `2.0MB`. */
function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes}B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)}KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)}MB`;
}

interface TruncationOptions {
  maxLines?: number;
  maxBytes?: number;
}

/**
 * Pi's `truncateHead` (keep the first lines: a file's start) and `truncateTail` (keep the last: a
 * command's end), whichever of the two limits comes first, in whole lines. Only the tail keeps part of a
 * line: the end of a last line longer than `maxBytes` (`lastLinePartial`); a head whose first line alone is
 * too long is empty (`firstLineExceedsLimit`).
 */
function truncate(content: string, options: TruncationOptions, fromEnd: boolean) {
  const maxLines = options.maxLines ?? DEFAULT_MAX_LINES;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const bytes = (s: string) => Buffer.byteLength(s, "utf8");
  const totalBytes = bytes(content);
  const lines = content.split("\n");
  const totalLines = lines.length;
  const result = (kept: string, by: "lines" | "bytes" | null, outputLines: number, partial = false) => ({
    content: kept,
    truncated: by !== null,
    truncatedBy: by,
    totalLines,
    totalBytes,
    outputLines,
    outputBytes: bytes(kept),
    lastLinePartial: partial,
    firstLineExceedsLimit: !fromEnd && by === "bytes" && outputLines === 0,
    maxLines,
    maxBytes,
  });
  if (totalLines <= maxLines && totalBytes <= maxBytes) return result(content, null, totalLines);
  const ordered = fromEnd ? [...lines].reverse() : lines;
  const kept: string[] = [];
  let size = 0;
  let by: "lines" | "bytes" = "lines";
  for (const line of ordered) {
    if (kept.length >= maxLines) break;
    const add = bytes(line) + (kept.length ? 1 : 0);
    if (size + add > maxBytes) {
      by = "bytes";
      if (fromEnd && kept.length === 0) {
        // the last line alone is too long: its end, cut on a character boundary
        const end = Buffer.from(line, "utf8")
          .subarray(-maxBytes)
          .toString("utf8")
          .replace(/^\uFFFD+/, "");
        return result(end, by, 1, true);
      }
      break;
    }
    kept.push(line);
    size += add;
  }
  return result((fromEnd ? kept.reverse() : kept).join("\n"), by, kept.length);
}

/** Pi's `DynamicBorder` component: a line of `─` as wide as it is drawn, coloured by the function given. */
class DynamicBorder {
  constructor(private readonly color: (text: string) => string = (text) => text) {}
  invalidate(): void {}
  render(width: number): string[] {
    return [this.color("─".repeat(Math.max(1, width)))];
  }
}

function codingAgent(localBash: PiBashOperations): Record<string, unknown> {
  return {
    createLocalBashOperations: () => localBash,
    isToolCallEventType: (name: string, event: { toolName?: string }) => event?.toolName === name,
    isBashToolResult: toolIs("bash"),
    isReadToolResult: toolIs("read"),
    isEditToolResult: toolIs("edit"),
    isWriteToolResult: toolIs("write"),
    isGrepToolResult: toolIs("grep"),
    isFindToolResult: toolIs("find"),
    isLsToolResult: toolIs("ls"),
    withFileMutationQueue,
    DynamicBorder,
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    formatSize,
    truncateHead: (content: string, options: TruncationOptions = {}) => truncate(content, options, false),
    truncateTail: (content: string, options: TruncationOptions = {}) => truncate(content, options, true),
    /** Pi's agent folder: `$PI_CODING_AGENT_DIR` (`~` allowed), else `~/.pi/agent`. */
    getAgentDir: () => {
      const dir = piAgentDir(process.env);
      return dir.replace(/^~(?=$|\/)/, process.env.HOME || homedir());
    },
    /** Pi's `defineTool`: a tool definition as it is (the helper only types it). */
    defineTool: <T>(tool: T): T => tool,
    /** Pi's `parseFrontmatter`: YAML front matter (`{}` without any) and the text after it. */
    parseFrontmatter: (content: string) => {
      const split = splitFrontMatter(content);
      return { frontmatter: split.data ?? {}, body: split.body };
    },
  };
}

/** Pi's `StringEnum`: a string schema with an `enum` list (providers that dislike `anyOf` accept it). */
const StringEnum = (values: readonly string[], options: Record<string, unknown> = {}) =>
  Type.Unsafe<string>({ type: "string", enum: [...values], ...options });

/**
 * A module bound to coil's own copy once it has loaded (`bind`): pi-tui, which extensions use in renderers and
 * widgets, after start-up (one that uses it while loading is loaded again once pi-tui is there); and TypeBox's
 * compiler and value functions (0.27 MB a run without extensions does not compile), bound when the runtime
 * starts, or loaded there and then (`now`) for an extension that uses them while it loads.
 */
function lateModule(
  name: string,
  now?: () => Record<string, unknown>,
): { module: object; bind(real: Record<string, unknown>): void } {
  let real: Record<string, unknown> | undefined;
  const module = new Proxy(
    {},
    {
      has: (_t, key) => typeof key === "string" && !SKIP.has(key),
      get(_t, key) {
        if (key === "__esModule") return true;
        if (typeof key !== "string" || SKIP.has(key)) return undefined;
        real ??= now?.();
        if (!real) throw new PiTuiNotReady(`${key} (${name})`);
        return real[key];
      },
    },
  );
  return {
    module,
    bind: (r) => {
      real = r;
    },
  };
}

/** The virtual modules for one runtime, and a hook to bind pi-tui when it has loaded. */
export function piModules(
  report: () => Report,
  localBash: PiBashOperations,
  loadNow: (specifier: string) => Record<string, unknown>,
): {
  modules: Record<string, unknown>;
  bindTui(real: Record<string, unknown>): void;
  bindTypebox(compile: Record<string, unknown>, value: Record<string, unknown>): void;
} {
  const agent = codingAgent(localBash);
  const tui = lateModule("@mariozechner/pi-tui");
  const ai = { StringEnum, Type, ...piAiStreaming };
  const tb = { ...typebox };
  const compile = lateModule("typebox/compile", () => loadNow("typebox/compile"));
  const value = lateModule("typebox/value", () => loadNow("typebox/value"));
  return {
    modules: {
      "@mariozechner/pi-coding-agent": moduleOf("@mariozechner/pi-coding-agent", agent, report),
      "@earendil-works/pi-coding-agent": moduleOf("@earendil-works/pi-coding-agent", agent, report),
      "@mariozechner/pi-ai": moduleOf("@mariozechner/pi-ai", ai, report),
      "@earendil-works/pi-ai": moduleOf("@earendil-works/pi-ai", ai, report),
      "@mariozechner/pi-tui": tui.module,
      "@earendil-works/pi-tui": tui.module,
      typebox: tb,
      "typebox/compile": compile.module,
      "typebox/value": value.module,
      "@sinclair/typebox": tb,
      "@sinclair/typebox/compiler": compile.module,
      "@sinclair/typebox/value": value.module,
    },
    bindTui: tui.bind,
    bindTypebox: (c, v) => {
      compile.bind(c);
      value.bind(v);
    },
  };
}
