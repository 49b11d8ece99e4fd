import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ReceiverMode } from "./faults";

/** One receiver of lab/chaos/receiver.ts: a port, a mode, the address it listens on. */
export interface ReceiverSpec {
  name: string;
  mode: ReceiverMode;
  port: number;
  /** 127.0.0.1, or :: (every interface) for the forbidden one. */
  host: string;
}

/**
 * A line of a receiver's file: a request as it arrived (before any answer), or, for a held one,
 * the answer about to be written.
 */
export type ReceiverRecord =
  | {
      kind: "request";
      receiver: string;
      /** The URL's path (/hooks/<endpoint name>) and the Host header, as sent. */
      path: string;
      host: string;
      /** The address the request reached (the forbidden receiver listens on all of them). */
      localAddress: string;
      receivedAt: number;
      id: string | null;
      timestamp: string | null;
      signature: string | null;
      body: string;
      /** The answer written at once, or null when it is held (an "answer" line follows). */
      status: number | null;
    }
  | { kind: "answer"; receiver: string; id: string | null; at: number; status: number };

/** The receiver behind the forbidden addresses: whatever it records is a violation. */
export const FORBIDDEN_RECEIVER = "forbidden";

export const receiverFile = (dir: string, name: string) => join(dir, `${name}.jsonl`);

/** Every line every receiver wrote; a line cut short by a SIGKILL is skipped. */
export function readReceiverRecords(dir: string): ReceiverRecord[] {
  if (!existsSync(dir)) return [];
  const records: ReceiverRecord[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".jsonl")))
    for (const line of readFileSync(join(dir, file), "utf8").split("\n")) {
      if (!line.trim()) continue;
      try {
        records.push(JSON.parse(line) as ReceiverRecord);
      } catch {
        // the last line of a killed receiver, half written
      }
    }
  return records;
}
