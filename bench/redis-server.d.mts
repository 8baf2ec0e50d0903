export declare function redisServerPath(): string | undefined;
export interface RedisServer {
  port: number;
  url: string;
  stop(): Promise<void>;
}
export declare function startRedis(options?: { timeoutMs?: number }): Promise<RedisServer>;
