/**
 * Ctrl+V: an image on the system clipboard (a screenshot), which no terminal sends as a paste. It is read
 * with the platform's clipboard tool — `wl-paste` under Wayland, `xclip` under X11, `pngpaste` on macOS —
 * saved as a private temporary PNG, and referenced as `@path` so the message attaches it. Without such a
 * tool, or without an image on the clipboard, the caller says so (docs/tui.md lists what works where).
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sniffImage } from "../../lib/sniff.js";

/** One way to read the clipboard: the tool, its arguments for the list of types and for the PNG bytes. */
interface Reader {
  tool: string;
  types?: string[];
  png: string[];
}

function readers(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): Reader[] {
  const out: Reader[] = [];
  if (env.WAYLAND_DISPLAY)
    out.push({ tool: "wl-paste", types: ["--list-types"], png: ["--no-newline", "--type", "image/png"] });
  if (env.DISPLAY)
    out.push({
      tool: "xclip",
      types: ["-selection", "clipboard", "-t", "TARGETS", "-o"],
      png: ["-selection", "clipboard", "-t", "image/png", "-o"],
    });
  if (platform === "darwin") out.push({ tool: "pngpaste", png: ["-"] });
  return out;
}

function run(tool: string, args: string[]): Promise<Buffer | undefined> {
  return new Promise((done) => {
    execFile(tool, args, { encoding: "buffer", timeout: 3000, maxBuffer: 32 * 1024 * 1024 }, (error, stdout) =>
      done(error ? undefined : stdout),
    );
  });
}

export type ClipboardImage = { file: string } | { problem: string };

/** The clipboard's image saved to a temporary PNG, or why there is none. */
export async function clipboardImage(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): Promise<ClipboardImage> {
  const tried: string[] = [];
  for (const r of readers(env, platform)) {
    if (r.types) {
      const types = await run(r.tool, r.types);
      if (types === undefined) {
        tried.push(`${r.tool} (not installed or failed)`);
        continue;
      }
      if (!types.toString("utf8").split(/\s+/).includes("image/png"))
        return { problem: "the clipboard holds no image (copy a screenshot or an image first)" };
    }
    const bytes = await run(r.tool, r.png);
    if (!bytes?.length || sniffImage(bytes)?.mimeType !== "image/png") {
      tried.push(`${r.tool} (no PNG image on the clipboard)`);
      continue;
    }
    const dir = join(tmpdir(), "coil-clipboard");
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = join(mkdtempSync(join(dir, "paste-")), "clipboard.png");
    writeFileSync(file, bytes, { mode: 0o600 });
    return { file };
  }
  if (!tried.length)
    return {
      problem:
        "no clipboard tool for this system: coil reads images with wl-paste (Wayland), xclip (X11) or pngpaste (macOS); save the image and type @path, or paste its path",
    };
  return { problem: `could not read an image from the clipboard: tried ${tried.join(", ")}` };
}

/** One way to put text on the clipboard. */
function writers(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): { tool: string; args: string[] }[] {
  const out: { tool: string; args: string[] }[] = [];
  if (env.WAYLAND_DISPLAY) out.push({ tool: "wl-copy", args: [] });
  if (env.DISPLAY) out.push({ tool: "xclip", args: ["-selection", "clipboard"] });
  if (platform === "darwin") out.push({ tool: "pbcopy", args: [] });
  return out;
}

/**
 * `/copy`: text onto the system clipboard with the platform's tool (wl-copy, xclip, pbcopy). The terminal
 * is also sent OSC 52, which terminals that allow it (and tmux with set-clipboard) copy even over SSH.
 * Resolves to how it was copied.
 */
export async function copyText(
  text: string,
  writeTerminal: (data: string) => void,
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): Promise<string> {
  writeTerminal(`\x1b]52;c;${Buffer.from(text, "utf8").toString("base64")}\x07`);
  for (const w of writers(env, platform)) {
    const ok = await new Promise<boolean>((done) => {
      const child = execFile(w.tool, w.args, { timeout: 3000 }, (error) => done(!error));
      child.stdin?.end(text);
    });
    if (ok) return `with ${w.tool}`;
  }
  return "through the terminal (OSC 52; no clipboard tool found: install wl-copy or xclip if it did not arrive)";
}
