/** npm references as presets and `coil install` write them (`npm:@acme/x@^1/team.yaml`), read by boot/ and lib/. */

/** An npm reference's package spec and lookup name: `npm:@acme/x@^1/team.yaml` → `@acme/x@^1`, `@acme/x`. */
export function npmSpec(ref: string): { spec: string; name: string } {
  const parts = ref.replace(/^npm:/, "").split("/");
  const spec = parts.slice(0, parts[0]!.startsWith("@") ? 2 : 1).join("/");
  return { spec, name: spec.replace(/(?<=.)@[^@]*$/, "") };
}
