/** Small building blocks of the TUI's layout (no terminal library import: it is passed in). */
import type * as PiTui from "@mariozechner/pi-tui";

/** A component drawn by a function, cached per width until touched. */
export class Lines implements PiTui.Component {
  private cache?: { width: number; lines: string[] };
  constructor(
    private draw: (width: number) => string[],
    /** Invalidate what the drawing uses (a Markdown component) along with this cache. */
    private readonly onInvalidate?: () => void,
  ) {}
  render(width: number): string[] {
    if (this.cache?.width === width) return this.cache.lines;
    const lines = this.draw(width);
    this.cache = { width, lines };
    return lines;
  }
  touch(): void {
    this.cache = undefined;
  }
  invalidate(): void {
    this.cache = undefined;
    this.onInvalidate?.();
  }
}

/** `text` wrapped to `width` (ANSI-aware), empty lines kept. */
export function wrapText(lib: typeof PiTui, text: string, width: number): string[] {
  return text.split("\n").flatMap((line) => (line ? lib.wrapTextWithAnsi(line, Math.max(10, width)) : [""]));
}
