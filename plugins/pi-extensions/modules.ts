/**
 * The module names a Pi extension imports, served by this plugin's loader so the import lines work
 * unchanged: `@mariozechner/pi-coding-agent` and `@earendil-works/pi-coding-agent` (the helpers an
 * extension calls at run time), `@mariozechner/pi-ai` (`StringEnum`), pi-tui under both names (coil's own
 * copy, bound once it has loaded), and `typebox` / `@sinclair/typebox` (coil's TypeBox). A name an
 * extension imports that coil does not have is a stub: calling it throws an error naming it, and the call
 * is reported for that extension.
 */
import * as typebox from "typebox";
import * as typeboxCompile from "typebox/compile";
import * as typeboxValue from "typebox/value";
import { Type } from "typebox";
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
        stub = function unavailable() {
          return fail();
        };
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
    DEFAULT_MAX_BYTES: 50 * 1024,
    DEFAULT_MAX_LINES: 2000,
  };
}

/** Pi's `StringEnum`: a string schema with an `enum` list (providers that dislike `anyOf` accept it). */
const StringEnum = (values: readonly string[], options: Record<string, unknown> = {}) =>
  Type.Unsafe<string>({ type: "string", enum: [...values], ...options });

/**
 * pi-tui, bound to coil's own copy once it has loaded (`bind`). Extensions use it in renderers and
 * widgets, after start-up; one that uses it while loading is loaded again once pi-tui is there.
 */
function lateModule(name: string): { module: object; bind(real: Record<string, unknown>): void } {
  let real: Record<string, unknown> | undefined;
  const module = new Proxy(
    {},
    {
      has: (_t, key) => typeof key === "string" && !SKIP.has(key),
      get(_t, key) {
        if (key === "__esModule") return true;
        if (typeof key !== "string" || SKIP.has(key)) return undefined;
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
): {
  modules: Record<string, unknown>;
  bindTui(real: Record<string, unknown>): void;
} {
  const agent = codingAgent(localBash);
  const tui = lateModule("@mariozechner/pi-tui");
  const ai = { StringEnum, Type, ...piAiStreaming };
  const tb = { ...typebox };
  return {
    modules: {
      "@mariozechner/pi-coding-agent": moduleOf("@mariozechner/pi-coding-agent", agent, report),
      "@earendil-works/pi-coding-agent": moduleOf("@earendil-works/pi-coding-agent", agent, report),
      "@mariozechner/pi-ai": moduleOf("@mariozechner/pi-ai", ai, report),
      "@earendil-works/pi-ai": moduleOf("@earendil-works/pi-ai", ai, report),
      "@mariozechner/pi-tui": tui.module,
      "@earendil-works/pi-tui": tui.module,
      typebox: tb,
      "typebox/compile": typeboxCompile,
      "typebox/value": typeboxValue,
      "@sinclair/typebox": tb,
      "@sinclair/typebox/compiler": typeboxCompile,
      "@sinclair/typebox/value": typeboxValue,
    },
    bindTui: tui.bind,
  };
}
