"use server";

import { revalidatePath } from "next/cache";
import { serverCaller } from "@/server/http/rsc";
import type { TWebhookEventType } from "@/server/webhooks";

export type SecretState = { secret: string; note: string } | { message: string } | null;

const failure = (error: unknown, fallback: string) => ({
  message: error instanceof Error ? error.message : fallback,
});

export async function addWebhookAction(_prev: SecretState, formData: FormData): Promise<SecretState> {
  const { caller } = await serverCaller();
  try {
    const made = await caller.webhooks.create({
      url: String(formData.get("url") ?? ""),
      // Checked by the procedure's input schema.
      events: formData.getAll("events").map(String) as TWebhookEventType[],
    });
    revalidatePath("/account");
    return { secret: made.secret, note: `Signing secret of ${made.url}` };
  } catch (error) {
    return failure(error, "Could not add the endpoint.");
  }
}

export async function rotateWebhookSecretAction(
  _prev: SecretState,
  formData: FormData,
): Promise<SecretState> {
  const { caller } = await serverCaller();
  try {
    const rotated = await caller.webhooks.rotateSecret({ id: String(formData.get("id") ?? "") });
    revalidatePath("/account");
    return {
      secret: rotated.secret,
      note: `New signing secret; the previous one signs too until ${rotated.previousExpiresAt.slice(0, 16).replace("T", " ")} UTC`,
    };
  } catch (error) {
    return failure(error, "Could not rotate the secret.");
  }
}

/** The endpoint's small actions: test event, replay, enable, delete. */
export async function webhookAction(formData: FormData): Promise<void> {
  const { caller } = await serverCaller();
  const id = String(formData.get("id") ?? "");
  switch (formData.get("do")) {
    case "test":
      await caller.webhooks.sendTest({ id });
      break;
    case "replay":
      await caller.webhooks.replayMessage({ id });
      break;
    case "replay-failed": {
      // The page's datetime-local fields, read as UTC (the page shows times in UTC).
      const utc = (name: string) => {
        const local = String(formData.get(name) ?? "");
        return `${local}${local.length === 16 ? ":00" : ""}Z`;
      };
      await caller.webhooks.replayFailed({ id, since: utc("since"), until: utc("until") });
      break;
    }
    case "enable":
      await caller.webhooks.setEnabled({ id, enabled: true });
      break;
    case "delete":
      await caller.webhooks.delete({ id });
      break;
  }
  revalidatePath("/account");
}
