/**
 * The skills index as the system prompt shows it, in three forms that keep every skill's name: `full`
 * (Agent Skills entries: name, description, location), `short` (a line per skill with the start of its
 * description, grouped by folder) and `names` (names only, grouped by folder). The skills plugin sizes
 * the index with this renderer and the system-prompt plugin writes it, so the budget is the real size.
 */

export interface SkillIndexEntry {
  name: string;
  description: string;
  /** Absolute path of SKILL.md. */
  location: string;
}

export type SkillIndexLevel = "full" | "short" | "names";

const byName = <T extends { name: string }>(a: T, b: T) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** Escape text for element content and attribute values of the XML-like blocks. */
export function escapeXml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}
/** Lighter escaping for the compact forms: enough that no text can close or open a tag. */
const escapeText = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** `<folder>/<name>/SKILL.md` → folder and the skill's own folder name. */
function split(location: string): { folder: string; dir: string } {
  const parts = location.split("/");
  parts.pop(); // SKILL.md
  const dir = parts.pop() ?? "";
  return { folder: parts.join("/") || "/", dir };
}

/** Skills grouped by the folder that holds their folders, in the order the folders first appear. */
function groups(skills: readonly SkillIndexEntry[]): [string, (SkillIndexEntry & { dir: string })[]][] {
  const out = new Map<string, (SkillIndexEntry & { dir: string })[]>();
  for (const s of skills) {
    const { folder, dir } = split(s.location);
    const list = out.get(folder) ?? [];
    list.push({ ...s, dir });
    out.set(folder, list);
  }
  return [...out].map(([folder, list]) => [folder, list.sort(byName)]);
}

/**
 * The `skills` block's text. `search` names the tool that searches the skills' full descriptions, when
 * this request offers it (said at the levels short and names).
 */
export function renderSkillIndex(skills: readonly SkillIndexEntry[], level: SkillIndexLevel, search?: string): string {
  if (skills.length === 0) return "";
  if (level === "full") {
    const items = [...skills]
      .sort(byName)
      .map(
        (s) =>
          `  <skill>\n    <name>${escapeXml(s.name)}</name>\n    <description>${escapeXml(s.description)}</description>\n    <location>${escapeXml(s.location)}</location>\n  </skill>`,
      );
    return `Skills are folders of instructions for particular tasks. When a task matches a skill's description, read its SKILL.md at the location given before you start, and follow it; paths in a skill are relative to its folder.\n\n<available_skills>\n${items.join("\n")}\n</available_skills>`;
  }
  const named = (s: SkillIndexEntry & { dir: string }) =>
    s.dir === s.name ? escapeText(s.name) : `${escapeText(s.name)} (in ${escapeText(s.dir)})`;
  const body = groups(skills).map(([folder, list]) => {
    const lines =
      level === "short"
        ? list.map((s) => `${named(s)}: ${escapeText(s.description)}`).join("\n")
        : list.map(named).join(", ");
    return `<available_skills folder="${escapeXml(folder)}">\n${lines}\n</available_skills>`;
  });
  const where = "A skill's SKILL.md is <folder>/<name>/SKILL.md, or in the folder named in parentheses.";
  const head =
    level === "short"
      ? `Skills are folders of instructions for particular tasks. When a task matches a skill, read its SKILL.md before you start, and follow it; paths in a skill are relative to its folder. Each of the ${skills.length} skills below is on a line with the start of its description. ${where}${search ? ` ${search} searches their full descriptions.` : ""}`
      : `Skills are folders of instructions for particular tasks. The ${skills.length} skills below are listed by name only, to keep this prompt small: when one may fit the task, read its SKILL.md to see what it does, and follow it. ${where}${search ? ` ${search} finds skills by words in their descriptions.` : ""}`;
  return `${head}\n\n${body.join("\n")}`;
}
