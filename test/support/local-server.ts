/**
 * What the local mocks share: listening on a free loopback port, closing with their keep-alive connections,
 * and (the login mocks) passing an accepted request on to a mock-openai server for the streamed reply.
 */
import type { Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface Listening {
  /** http://127.0.0.1:<port>, no trailing slash. */
  url: string;
  /** Stops listening and drops open connections (an SDK's keep-alive socket would hold `close` open). */
  close(): Promise<void>;
}

/** Listen on 127.0.0.1 at a port the system picks. */
export async function listenLocal(server: Server): Promise<Listening> {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** POST `body` to `url` and send its answer (status, content type, bytes) as the reply; resolves to the status. */
export async function forward(res: ServerResponse, url: string, body: string): Promise<number> {
  const up = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });
  res.writeHead(up.status, { "content-type": up.headers.get("content-type") ?? "application/json" });
  res.end(Buffer.from(await up.arrayBuffer()));
  return up.status;
}
