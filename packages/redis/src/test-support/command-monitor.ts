// Counts the commands Redis receives that name a given text (a test's unique namespace is in every key it uses), by
// watching Redis's MONITOR feed: what the server received from clients, not what a client meant to send.
import type { Redis } from 'ioredis';
import { testClient } from './test-redis.js';

export interface CommandMonitor {
  /** Commands seen so far whose arguments contain the text, as `name key`. */
  readonly commands: readonly string[];
  /** Waits until Redis has shown every command sent before this call, then returns what was seen. */
  settle(): Promise<readonly string[]>;
  close(): Promise<void>;
}

/** Starts watching for commands whose arguments contain `text`. */
export async function monitorCommands(text: string, url?: string): Promise<CommandMonitor> {
  const client = testClient(url);
  const monitor: Redis = await client.monitor();
  const commands: string[] = [];
  const markers = new Map<string, () => void>();
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    // Commands a script runs show up too, from "lua": only what clients sent counts as a round trip.
    if (source === 'lua') return;
    const marker = markers.get(args[1] ?? '');
    if (args[0]?.toLowerCase() === 'echo' && marker !== undefined) return marker();
    if (args.some((argument) => argument.includes(text)))
      commands.push(`${args[0]?.toLowerCase()} ${args[1] ?? ''}`);
  });
  const sender = testClient(url);
  let markerCount = 0;
  return {
    commands,
    async settle() {
      const marker = `${text}:marker:${markerCount++}`;
      const seen = new Promise<void>((resolve) => markers.set(marker, resolve));
      await sender.echo(marker);
      await seen;
      markers.delete(marker);
      return [...commands];
    },
    async close() {
      monitor.disconnect();
      client.disconnect();
      await sender.quit();
    },
  };
}
