/**
 * The TUI's dialogs: a pick list or a text input takes the editor's place, one at a time, and gives
 * the editor back when it closes (or when its signal aborts). Plugins reach them as the `ui` service.
 */
import type * as PiTui from "@mariozechner/pi-tui";
import type { UiComponent, UiCustomFactory, UiCustomOptions } from "../../lib/ui.js";
import { Lines, wrapText } from "./lines.js";
import { c, colorDiffsIn, selectTheme } from "./render.js";
import { theme } from "./theme.js";
import type { Dialogs, PickItem } from "./types.js";

type Component = PiTui.Component;

export class DialogHost {
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly lib: typeof PiTui,
    private readonly tui: PiTui.TUI,
    private readonly slot: PiTui.Container,
    private readonly editor: PiTui.Editor,
    /** False once the app stopped: a dialog then answers its fallback at once. */
    private readonly running: () => boolean,
    private readonly refresh: () => void,
    /** Show a problem in the transcript. */
    private readonly onError: (message: string) => void = () => undefined,
  ) {}

  /** The `Dialogs` plugins and commands use. */
  dialogs(): Dialogs {
    return {
      confirm: async (title, message, signal) =>
        (await this.pickOne(
          `${title}\n${message}`,
          [
            { value: "yes", label: "Yes" },
            { value: "no", label: "No" },
          ],
          { signal },
        )) === "yes",
      select: (title, options, signal) =>
        this.pickOne(
          title,
          options.map((o) => ({ value: o, label: o })),
          { signal },
        ),
      input: (title, placeholder, signal) => this.askText(title, placeholder, signal),
      pick: (title, items, options) => this.pickOne(title, items, options ?? {}),
      pickTree: (title, items, options) => this.pickTree(title, items, options ?? {}),
      secret: (title, hint, signal) => this.askText(title, hint, signal, true),
    };
  }

  private inDialog<T>(
    build: (close: (value: T) => void) => Component,
    fallbackValue: T,
    signal?: AbortSignal,
  ): Promise<T> {
    const next = this.chain.then(
      () =>
        new Promise<T>((done) => {
          if (signal?.aborted || !this.running()) return done(fallbackValue);
          let closed = false;
          const close = (value: T) => {
            if (closed) return;
            closed = true;
            signal?.removeEventListener("abort", onAbort);
            this.slot.clear();
            this.slot.addChild(this.editor);
            this.tui.setFocus(this.editor);
            this.refresh();
            done(value);
          };
          const onAbort = () => close(fallbackValue);
          signal?.addEventListener("abort", onAbort, { once: true });
          const component = build(close);
          this.slot.clear();
          this.slot.addChild(component);
          this.tui.setFocus(component);
          this.refresh();
        }),
    );
    this.chain = next.catch(() => undefined);
    return next;
  }

  pickOne(
    title: string,
    items: readonly PickItem[],
    options: { selected?: string; signal?: AbortSignal },
  ): Promise<string | undefined> {
    return this.inDialog<string | undefined>(
      (close) => {
        const list = new this.lib.SelectList(
          [...items],
          Math.max(3, Math.min(10, (this.tui.terminal.rows || 24) - 10)),
          selectTheme(),
        );
        const at = options.selected ? items.findIndex((i) => i.value === options.selected) : -1;
        if (at >= 0) list.setSelectedIndex(at);
        list.onSelect = (item) => close(item.value);
        list.onCancel = () => close(undefined);
        // a diff in the message (the rewind preview) is coloured like the transcript's
        const [first = "", ...rest] = title.split("\n");
        const message = rest.length ? colorDiffsIn(rest.join("\n")) : [];
        const head = new Lines((w) => [
          c.border("─".repeat(w)),
          ...wrapText(this.lib, first, w).map((x) => c.bold(x)),
          ...message.flatMap((l) => wrapText(this.lib, l, w)),
        ]);
        const foot = new Lines((w) => [
          c.dim(this.lib.truncateToWidth("↑↓ move · Enter choose · Esc cancel", w)),
          c.border("─".repeat(w)),
        ]);
        return this.box([head, list, foot], list);
      },
      undefined,
      options.signal,
    );
  }

  /**
   * A pick list with a filter line above it: typed text narrows the items (fuzzy, on label and
   * description); arrows, Page keys, Enter and Esc act on the list.
   */
  pickFiltered(
    title: string,
    items: readonly PickItem[],
    options: { selected?: string; signal?: AbortSignal; empty?: string },
  ): Promise<string | undefined> {
    const { matchesKey } = this.lib;
    return this.inDialog<string | undefined>(
      (close) => {
        const rows = Math.max(3, Math.min(10, (this.tui.terminal.rows || 24) - 12));
        const input = new this.lib.Input();
        let shown = [...items];
        const build = () => {
          const list = new this.lib.SelectList(shown, rows, selectTheme());
          list.onSelect = (item) => close(item.value);
          list.onCancel = () => close(undefined);
          return list;
        };
        let list = build();
        const at = options.selected ? items.findIndex((i) => i.value === options.selected) : -1;
        if (at >= 0) list.setSelectedIndex(at);
        const refilter = () => {
          const query = input.getValue().trim();
          shown = query
            ? this.lib.fuzzyFilter([...items], query, (i) => `${i.label} ${i.description ?? ""}`)
            : [...items];
          list = build();
        };
        const head = new Lines((w) => [
          c.border("─".repeat(w)),
          ...title.split("\n").flatMap((l, i) => wrapText(this.lib, l, w).map((x) => (i === 0 ? c.bold(x) : x))),
        ]);
        const body: Component = {
          render: (w) =>
            shown.length ? list.render(w) : [c.dim(this.lib.truncateToWidth(options.empty ?? "(nothing matches)", w))],
          invalidate: () => list.invalidate(),
        };
        const foot = new Lines((w) => [
          c.dim(this.lib.truncateToWidth("type to filter · ↑↓ move · Enter choose · Esc cancel", w)),
          c.border("─".repeat(w)),
        ]);
        const keys = ["up", "down", "pageUp", "pageDown", "enter", "escape"] as const;
        const router: Component & PiTui.Focusable = {
          render: () => [],
          invalidate: () => undefined,
          handleInput: (data) => {
            if (keys.some((k) => matchesKey(data, k)) || matchesKey(data, "ctrl+c")) list.handleInput(data);
            else {
              input.handleInput(data);
              refilter();
            }
          },
          get focused() {
            return input.focused;
          },
          set focused(v: boolean) {
            input.focused = v;
          },
        };
        return this.box([head, input, body, foot], router);
      },
      undefined,
      options.signal,
    );
  }

  /**
   * The /tree picker: rows that fill the terminal, opening at `selected`; typing filters (fuzzy, flat
   * list), Left folds the selected row's subtree and Right opens it again, Alt+L asks to label the row.
   * Resolves to the chosen entry id, `{ label: id }`, or undefined.
   */
  pickTree(
    title: string,
    items: readonly (PickItem & { parent?: string; children: number })[],
    options: { selected?: string },
  ): Promise<string | { label: string } | undefined> {
    const { matchesKey } = this.lib;
    return this.inDialog<string | { label: string } | undefined>((close) => {
      const rows = Math.max(5, (this.tui.terminal.rows || 24) - 8);
      const input = new this.lib.Input();
      const folded = new Set<string>();
      const parentOf = new Map(items.map((i) => [i.value, i.parent]));
      const hidden = (id: string) => {
        for (let p = parentOf.get(id); p; p = parentOf.get(p)) if (folded.has(p)) return true;
        return false;
      };
      let selected = options.selected;
      let shown: PickItem[] = [];
      let list: PiTui.SelectList;
      const build = () => {
        const query = input.getValue().trim();
        shown = query
          ? this.lib.fuzzyFilter([...items], query, (i) => `${i.label} ${i.description ?? ""}`)
          : items
              .filter((i) => !hidden(i.value))
              .map((i) =>
                folded.has(i.value)
                  ? { ...i, label: `${i.label} ${c.dim(`▸ +${this.countUnder(items, i.value)}`)}` }
                  : i,
              );
        list = new this.lib.SelectList(shown, rows, selectTheme());
        list.onSelect = (item) => close(item.value);
        list.onCancel = () => close(undefined);
        list.onSelectionChange = (item) => {
          selected = item.value;
        };
        // the row chosen before, else the best match of a search, else the last row
        const at = selected ? shown.findIndex((i) => i.value === selected) : -1;
        list.setSelectedIndex(at >= 0 ? at : query ? 0 : Math.max(0, shown.length - 1));
      };
      build();
      const head = new Lines((w) => [c.border("─".repeat(w)), ...wrapText(this.lib, title, w).map((x) => c.bold(x))]);
      const body: Component = {
        render: (w) => (shown.length ? list.render(w) : [c.dim("(nothing matches)")]),
        invalidate: () => list.invalidate(),
      };
      const foot = new Lines((w) => [
        c.dim(
          this.lib.truncateToWidth(
            "type to search · ↑↓ move · ←/→ fold/unfold · Alt+L label · Enter go there · Esc cancel",
            w,
          ),
        ),
        c.border("─".repeat(w)),
      ]);
      const keys = ["up", "down", "pageUp", "pageDown", "enter", "escape"] as const;
      const router: Component & PiTui.Focusable = {
        render: () => [],
        invalidate: () => undefined,
        handleInput: (data) => {
          const current = list.getSelectedItem()?.value;
          if (matchesKey(data, "alt+l")) {
            if (current) close({ label: current });
          } else if (matchesKey(data, "left") && !input.getValue() && current) {
            const item = items.find((i) => i.value === current);
            // fold this row's subtree, or, on a row without one, its parent's
            const target = item?.children ? current : item?.parent;
            if (target) {
              folded.add(target);
              selected = target;
              build();
            }
          } else if (matchesKey(data, "right") && !input.getValue() && current && folded.has(current)) {
            folded.delete(current);
            build();
          } else if (keys.some((k) => matchesKey(data, k)) || matchesKey(data, "ctrl+c")) list.handleInput(data);
          else {
            input.handleInput(data);
            build();
          }
        },
        get focused() {
          return input.focused;
        },
        set focused(v: boolean) {
          input.focused = v;
        },
      };
      return this.box([head, input, body, foot], router);
    }, undefined);
  }

  /** How many rows hang under `id`. */
  private countUnder(items: readonly { value: string; parent?: string }[], id: string): number {
    const under = new Set([id]);
    let n = 0;
    for (const i of items)
      if (i.parent && under.has(i.parent)) {
        under.add(i.value);
        n++;
      }
    return n;
  }

  /** A line of text; `secret` shows a dot per character instead of the text (an API key). */
  askText(
    title: string,
    placeholder: string | undefined,
    signal?: AbortSignal,
    secret = false,
  ): Promise<string | undefined> {
    return this.inDialog<string | undefined>(
      (close) => {
        const input = new this.lib.Input();
        input.onSubmit = (value) => close(value);
        input.onEscape = () => close(undefined);
        const head = new Lines((w) => [c.border("─".repeat(w)), ...wrapText(this.lib, title, w).map((x) => c.bold(x))]);
        const foot = new Lines((w) => [
          c.dim(this.lib.truncateToWidth(`${placeholder ? `${placeholder} · ` : ""}Enter confirm · Esc cancel`, w)),
          c.border("─".repeat(w)),
        ]);
        const masked = new Lines((w) => [this.lib.truncateToWidth(`> ${"•".repeat(input.getValue().length)}`, w)]);
        if (secret)
          return this.box([head, masked, foot], {
            handleInput: (d) => {
              input.handleInput(d);
              masked.touch();
            },
            render: () => [],
            invalidate: () => undefined,
          });
        return this.box([head, input, foot], input);
      },
      undefined,
      signal,
    );
  }

  /**
   * A plugin's component (the `ui` service's `custom`, Pi's `ctx.ui.custom`): it has the keyboard until it
   * calls `done(value)`. In the editor's place, one at a time like the dialogs; with `overlay`, floating over
   * the screen through pi-tui's overlays (focus goes back where it was when it closes). An asynchronous
   * factory is awaited; the component is disposed when it closes.
   */
  custom<T>(factory: UiCustomFactory<T>, options: UiCustomOptions = {}): Promise<T | undefined> {
    if (options.overlay) return this.overlay(factory, options);
    return this.inDialog<T | undefined>(
      (close) => {
        // Until an asynchronous factory is done, the slot is empty; keys then go to the component.
        let inner: (UiComponent & { dispose?(): void; focused?: boolean }) | undefined;
        let focused = false;
        let closed = false;
        const finish = (value: T | undefined) => {
          if (closed) return;
          closed = true;
          inner?.dispose?.();
          close(value);
        };
        const made = (component: UiComponent & { dispose?(): void }) => {
          if (closed) return component.dispose?.();
          inner = component;
          if ("focused" in inner) inner.focused = focused;
          this.refresh();
        };
        try {
          const out = factory(this.tui, theme(), this.lib.getKeybindings(), finish);
          if (out && typeof (out as Promise<unknown>).then === "function")
            (out as Promise<UiComponent>).then(made, (error) => {
              finish(undefined);
              this.fail(error);
            });
          else made(out as UiComponent);
        } catch (error) {
          queueMicrotask(() => {
            finish(undefined);
            this.fail(error);
          });
        }
        return {
          render: (w) => inner?.render(w) ?? [],
          invalidate: () => inner?.invalidate?.(),
          handleInput: (data) => {
            inner?.handleInput?.(data);
            this.tui.requestRender();
          },
          get focused() {
            return focused;
          },
          set focused(v: boolean) {
            focused = v;
            if (inner && "focused" in inner) inner.focused = v;
          },
        };
      },
      undefined,
      options.signal,
    );
  }

  private async overlay<T>(factory: UiCustomFactory<T>, options: UiCustomOptions): Promise<T | undefined> {
    if (options.signal?.aborted || !this.running()) return undefined;
    let handle: PiTui.OverlayHandle | undefined;
    let component: (UiComponent & { dispose?(): void }) | undefined;
    let settle!: (value: T | undefined) => void;
    const result = new Promise<T | undefined>((resolve) => {
      settle = resolve;
    });
    let closed = false;
    const finish = (value: T | undefined) => {
      if (closed) return;
      closed = true;
      options.signal?.removeEventListener("abort", onAbort);
      handle?.hide();
      component?.dispose?.();
      this.refresh();
      settle(value);
    };
    const onAbort = () => finish(undefined);
    options.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      component = await factory(this.tui, theme(), this.lib.getKeybindings(), finish);
    } catch (error) {
      finish(undefined);
      this.fail(error);
      return result;
    }
    if (closed) {
      component.dispose?.();
      return result;
    }
    const where = typeof options.overlayOptions === "function" ? options.overlayOptions() : options.overlayOptions;
    handle = this.tui.showOverlay(component as PiTui.Component, where as PiTui.OverlayOptions | undefined);
    options.onHandle?.(handle);
    this.refresh();
    return result;
  }

  /** A custom component's factory failed: said in the transcript, and the call resolves to undefined. */
  private fail(error: unknown): void {
    this.onError(`a custom component failed: ${error instanceof Error ? error.message : String(error)}`);
  }

  /** Stack components; keys go to `target`. Focus is passed on so the input's cursor shows. */
  private box(parts: Component[], target: Component): Component & PiTui.Focusable {
    let focused = false;
    return {
      render: (w) => parts.flatMap((p) => p.render(w)),
      invalidate: () => {
        parts.forEach((p) => {
          p.invalidate();
        });
      },
      handleInput: (data) => {
        target.handleInput?.(data);
        this.tui.requestRender();
      },
      get focused() {
        return focused;
      },
      set focused(v: boolean) {
        focused = v;
        if ("focused" in target) (target as unknown as PiTui.Focusable).focused = v;
      },
    };
  }
}
