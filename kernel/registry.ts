/**
 * Registries: named things plugins offer (tools, providers, commands, flags, front ends, services).
 * A duplicate name is an error naming both owners. Registration closes before the first model call.
 */
import { CoilError } from "./errors.js";

export interface Owned<T> {
  value: T;
  /** Plugin id that registered it. */
  owner: string;
  /** Where that plugin came from (preset file or path), for error messages. */
  source?: string;
  /** Registered as a fallback: a plain registration of the name takes its place. */
  fallback?: boolean;
}

export class Registry<T> {
  private readonly items = new Map<string, Owned<T>>();
  private closed = false;
  /** Names registered through sync(). */
  private readonly late = new Set<string>();

  constructor(readonly kind: string) {}

  /** A `fallback` gives way to a plain registration of the same name, and loses to any earlier entry. */
  register(name: string, value: T, owner: string, source?: string, fallback = false): void {
    if (this.closed) {
      throw new CoilError(
        "REGISTRATION_CLOSED",
        `cannot register ${this.kind} '${name}' after start-up; register it in setup()`,
        { plugin: owner },
      );
    }
    if (!name || typeof name !== "string") {
      throw new CoilError("PLUGIN_INVALID", `a ${this.kind} needs a non-empty name`, { plugin: owner });
    }
    const existing = this.items.get(name);
    if (existing && fallback) return;
    if (existing && !existing.fallback) {
      const where = (o: Owned<T>) => `plugin ${o.owner}${o.source ? ` (${o.source})` : ""}`;
      throw new CoilError(
        "REGISTRY_DUPLICATE",
        `${this.kind} '${name}' is registered by both ${where(existing)} and ${where({ value, owner, source })}`,
        { plugin: owner, hint: `remove one of the two plugins from the preset, or rename the ${this.kind}` },
      );
    }
    this.items.set(name, fallback ? { value, owner, source, fallback } : { value, owner, source });
  }

  get(name: string): T | undefined {
    return this.items.get(name)?.value;
  }

  owner(name: string): string | undefined {
    return this.items.get(name)?.owner;
  }

  has(name: string): boolean {
    return this.items.has(name);
  }

  names(): string[] {
    return [...this.items.keys()];
  }

  values(): T[] {
    return [...this.items.values()].map((o) => o.value);
  }

  entries(): [string, Owned<T>][] {
    return [...this.items.entries()];
  }

  close(): void {
    this.closed = true;
  }

  /**
   * Replace what `owner` registered through sync() (allowed after start-up: e.g. tools an MCP server lists).
   * Entries it registered in setup stay. A name another plugin holds is an error and nothing changes.
   */
  sync(owner: string, values: readonly [string, T][], source?: string): void {
    const clash = values.find(
      ([name]) => this.items.has(name) && (!this.late.has(name) || this.items.get(name)!.owner !== owner),
    );
    if (clash)
      throw new CoilError(
        "REGISTRY_DUPLICATE",
        `${this.kind} '${clash[0]}' is already registered by plugin ${this.items.get(clash[0])!.owner}`,
        { plugin: owner },
      );
    for (const name of [...this.late]) {
      if (this.owner(name) !== owner) continue;
      this.items.delete(name);
      this.late.delete(name);
    }
    for (const [name, value] of values) {
      this.items.set(name, { value, owner, source });
      this.late.add(name);
    }
  }
}

/** A registry seen from outside the host: look-ups only. */
export type ReadonlyRegistry<T> = Pick<Registry<T>, "get" | "has" | "owner" | "names" | "values" | "entries">;
