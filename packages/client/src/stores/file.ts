import { createHash, randomBytes } from "node:crypto";
import { link, mkdir, open, readdir, readFile, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import type { IntentStore, StoredIntent } from "../intents.js";

/**
 * Intents as files in a folder (made if missing), one JSON file per intent. A write is durable and
 * atomic: the content goes to a temporary file that is flushed to disk, then hard-linked under
 * its final name (which fails if the intent exists, so two processes cannot both create it),
 * and the folder is flushed so the new name survives a power cut too.
 */
export function fileStore(path: string): IntentStore {
  const ready = mkdir(path, { recursive: true });
  // The intent id is the caller's and may hold any character: the file is named by its hash.
  const fileOf = (intentId: string) =>
    join(path, `${createHash("sha256").update(intentId).digest("hex").slice(0, 40)}.json`);

  async function syncFolder() {
    const dir = await open(path, "r");
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  }

  async function read(file: string): Promise<StoredIntent> {
    return JSON.parse(await readFile(file, "utf8")) as StoredIntent;
  }

  /** The intent written, flushed, to a temporary file beside `final`; its name. */
  async function writeTemporary(final: string, intent: StoredIntent): Promise<string> {
    const temporary = `${final}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
    const handle = await open(temporary, "wx", 0o600);
    try {
      await handle.writeFile(JSON.stringify(intent));
      await handle.sync();
    } finally {
      await handle.close();
    }
    return temporary;
  }

  return {
    async create(intent) {
      await ready;
      const final = fileOf(intent.intentId);
      const temporary = await writeTemporary(final, intent);
      try {
        await link(temporary, final);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        return read(final);
      } finally {
        await unlink(temporary);
      }
      await syncFolder();
      return intent;
    },
    async list() {
      await ready;
      const names = (await readdir(path)).filter((name) => name.endsWith(".json"));
      const intents: StoredIntent[] = [];
      for (const name of names) {
        try {
          intents.push(await read(join(path, name)));
        } catch (error) {
          // Forgotten between readdir and read.
          if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
        }
      }
      return intents.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    },
    async delete(intentId) {
      await ready;
      try {
        await unlink(fileOf(intentId));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
        return;
      }
      await syncFolder();
    },
    async settle(intent, answer) {
      await ready;
      const final = fileOf(intent.intentId);
      const stored = await read(final).catch((error: NodeJS.ErrnoException) => {
        if (error.code === "ENOENT") return null;
        throw error;
      });
      if (stored?.key !== intent.key) return;
      // rename() replaces the file in one step: a reader sees the intent with or without its answer.
      await rename(await writeTemporary(final, { ...stored, answer }), final);
      await syncFolder();
    },
  };
}
