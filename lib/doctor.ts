/**
 * Sections of `coil doctor` that plugins contribute (skills, context files, ...): the `doctor` service is
 * a list; the first plugin that needs it (a contributor, or the one that prints the report) provides it,
 * so the preset's order does not matter. The plugin owning the `doctor` subcommand prints each section
 * after its own report.
 */
import type { PluginContext } from "../api/index.js";

export interface DoctorSection {
  title: string;
  /** The text printed under the title (what was loaded, what was skipped and why). */
  report(): string | Promise<string>;
}

export interface DoctorService {
  add(section: DoctorSection): void;
  sections(): readonly DoctorSection[];
}

declare module "coil" {
  interface Services {
    doctor: DoctorService;
  }
}

/** The host's `doctor` list, provided by this plugin if no plugin has yet (call it during setup). */
export function doctorService(ctx: Pick<PluginContext, "services">): DoctorService {
  const existing = ctx.services.get("doctor") as DoctorService | undefined;
  if (existing) return existing;
  const list: DoctorSection[] = [];
  const service: DoctorService = { add: (s) => void list.push(s), sections: () => list };
  ctx.services.provide("doctor", service);
  return service;
}

export function addDoctorSection(ctx: Pick<PluginContext, "services">, section: DoctorSection): void {
  doctorService(ctx).add(section);
}

/** Each section's title and report text (a section that fails says why in its report). */
export async function reportSections(sections: readonly DoctorSection[]): Promise<{ title: string; report: string }[]> {
  const out: { title: string; report: string }[] = [];
  for (const s of sections) {
    let text: string;
    try {
      text = await s.report();
    } catch (error) {
      text = `cannot report: ${(error as Error).message}`;
    }
    out.push({ title: s.title, report: text.replace(/\n+$/, "") });
  }
  return out;
}

/** The sections as printed: a title line, then the report indented by two spaces. */
export async function formatSections(sections: readonly DoctorSection[]): Promise<string> {
  return (await reportSections(sections)).map((s) => `${s.title}:\n${s.report.replace(/^/gm, "  ")}\n`).join("");
}
