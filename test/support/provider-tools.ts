/** Tools the provider tests call through the real SDKs: `add` (text) and `look` (text and an image). */
import { Type, definePlugin } from "../../api/index.js";

/** A real 1x1 PNG, base64. */
export const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

export const testTools = definePlugin({
  id: "test-tools",
  setup(ctx) {
    ctx.tools.register({
      name: "add",
      description: "Add two numbers",
      parameters: Type.Object({ a: Type.Number(), b: Type.Number() }),
      async execute(args) {
        return { content: [{ type: "text", text: String(args.a + args.b) }] };
      },
    });
    ctx.tools.register({
      name: "look",
      description: "Take a picture",
      parameters: Type.Object({}),
      async execute() {
        return {
          content: [
            { type: "text", text: "a picture:" },
            { type: "image", data: PNG, mimeType: "image/png" },
          ],
        };
      },
    });
  },
});
