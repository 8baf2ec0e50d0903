/**
 * The Anthropic SDK's client with only the resource coil calls (`messages`). The SDK's default export wires
 * every resource of the API (files, skills, models, organization, the whole beta tree): 1.4 MB of JavaScript
 * that a run compiles before its first request. `BaseAnthropic` is the same client (auth, headers, timeouts,
 * the `fetch` it is given, its errors) without them: about a quarter of that. Imported on the first request.
 */
import { BaseAnthropic } from "@anthropic-ai/sdk/client";
import { Messages } from "@anthropic-ai/sdk/resources/messages";

export class MessagesClient extends BaseAnthropic {
  messages: Messages = new Messages(this);
}

/** What a provider sends through: this client, or a cloud's (Bedrock, Vertex), which has `messages` too. */
export type AnthropicClient = Pick<MessagesClient, "messages">;
