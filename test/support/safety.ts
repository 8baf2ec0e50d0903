/** Test helpers for the safety plugins: stand-in tools that record what ran, and a `ui` service answering from a script. */
import { definePlugin, Type, type UiService } from "../../api/index.js";

/** Tools named like the coding tools; `ran` lists `name:json(args)` of every call that executed. */
export function recordingTools(names: string[] = ["read", "bash", "edit", "write", "grep", "ls", "deploy"]) {
  const ran: string[] = [];
  const plugin = definePlugin({
    id: "recording-tools",
    setup(ctx) {
      for (const name of names) {
        ctx.tools.register({
          name,
          description: `stand-in ${name}`,
          parameters: Type.Object({}, { additionalProperties: true }),
          async execute(args) {
            ran.push(`${name}:${JSON.stringify(args)}`);
            return { content: [{ type: "text", text: `${name} ok` }] };
          },
        });
      }
    },
  });
  return { plugin, ran };
}

/** A `ui` service whose answers come from `answers` in order; every question is kept in `asked`. */
export function scriptedUi(answers: (string | boolean | undefined)[]) {
  const asked: { kind: string; title: string; options?: readonly string[] }[] = [];
  const notes: string[] = [];
  const next = () => {
    if (answers.length === 0) throw new Error("scriptedUi: no answer left for this question");
    return answers.shift();
  };
  const ui: UiService = {
    async confirm(title) {
      asked.push({ kind: "confirm", title });
      return next() === true;
    },
    async select(title, options) {
      asked.push({ kind: "select", title, options });
      return next() as string | undefined;
    },
    async input(title) {
      asked.push({ kind: "input", title });
      return next() as string | undefined;
    },
    notify(message) {
      notes.push(message);
    },
  };
  const plugin = definePlugin({ id: "scripted-ui", setup: (ctx) => ctx.services.provide("ui", ui) });
  return { plugin, asked, notes, answers };
}
