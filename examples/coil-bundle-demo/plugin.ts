/**
 * A custom tool: `word_stats` counts lines, words and characters of a text.
 * `coil` is resolved by coil itself when it loads this file, so the package needs no dependencies.
 */
import { definePlugin, Type } from "coil";

export default definePlugin({
  id: "coil-bundle-demo",
  description: "word_stats: count lines, words and characters",
  options: Type.Object({ label: Type.String({ default: "stats" }) }),
  setup(ctx) {
    ctx.tools.register({
      name: "word_stats",
      label: "Word stats",
      description: "Count the lines, words and characters of a text.",
      parameters: Type.Object({ text: Type.String({ description: "The text to measure" }) }),
      async execute(args) {
        const lines = args.text === "" ? 0 : args.text.split("\n").length;
        const words = args.text.split(/\s+/).filter(Boolean).length;
        const chars = [...args.text].length;
        return {
          content: [
            { type: "text", text: `${ctx.options.label}: ${lines} lines, ${words} words, ${chars} characters` },
          ],
          details: { lines, words, chars },
        };
      },
    });
  },
});
