import { describe, expect, it } from "vitest";
import { db } from "../db";
import { createTestAccount } from "../test/fixtures";
import { waitFor } from "../test/messaging/queue";
import { type AddressPolicy, addressRefusal, checkEndpointUrl, type ResolvedAddress } from "./address-guard";
import { deliverDueMessages } from "./deliver";
import { registerEndpoint } from "./endpoints";
import { sendTestEvent } from "./replay";
import { startReceiver } from "./testing/receiver";

/** A resolver that answers what the test says: the attacker's DNS. */
const dns =
  (names: Record<string, string[]>) =>
  async (hostname: string): Promise<ResolvedAddress[]> => {
    const addresses = names[hostname];
    if (!addresses) throw new Error("ENOTFOUND");
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };

const PRODUCTION: AddressPolicy = {
  requireHttps: true,
  allowLoopback: false,
  resolve: dns({
    "loopback.attacker.test": ["127.0.0.1"],
    "private.attacker.test": ["10.0.0.1"],
    "metadata.attacker.test": ["169.254.169.254"],
    "mixed.attacker.test": ["93.184.216.34", "10.0.0.1"],
    "v6.attacker.test": ["::ffff:169.254.169.254"],
    "merchant.example": ["93.184.216.34"],
  }),
};

describe("which addresses may receive webhooks", () => {
  it.each([
    "127.0.0.1",
    "127.255.0.9",
    "10.0.0.1",
    "172.16.5.4",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "100.100.100.200",
    "0.0.0.0",
    "224.0.0.1",
    "255.255.255.255",
    "::1",
    "::",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "64:ff9b::a00:1",
    "fd00:ec2::254",
    "fe80::1",
    "ff02::1",
  ])("refuses %s in production", (address) => {
    expect(addressRefusal(address, { allowLoopback: false })).not.toBeNull();
  });

  it.each(["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111"])("allows the public %s", (address) => {
    expect(addressRefusal(address, { allowLoopback: false })).toBeNull();
  });

  it("loopback only when the configuration allows it; private and metadata never", () => {
    expect(addressRefusal("127.0.0.1", { allowLoopback: true })).toBeNull();
    expect(addressRefusal("::1", { allowLoopback: true })).toBeNull();
    expect(addressRefusal("10.0.0.1", { allowLoopback: true })).not.toBeNull();
    expect(addressRefusal("169.254.169.254", { allowLoopback: true })).not.toBeNull();
  });
});

describe("registration in production mode", () => {
  it.each([
    ["https://127.0.0.1/hooks", /loopback/],
    ["https://10.0.0.1/hooks", /private/],
    ["https://169.254.169.254/latest/meta-data", /link-local/],
    ["https://[::1]/hooks", /loopback/],
    ["https://loopback.attacker.test/hooks", /resolves to 127\.0\.0\.1/],
    ["https://private.attacker.test/hooks", /resolves to 10\.0\.0\.1/],
    ["https://metadata.attacker.test/hooks", /resolves to 169\.254\.169\.254/],
    ["https://mixed.attacker.test/hooks", /resolves to 10\.0\.0\.1/],
    ["https://v6.attacker.test/hooks", /169\.254\.169\.254/],
    ["http://merchant.example/hooks", /must be https/],
    ["https://user:pw@merchant.example/hooks", /credentials/],
    ["https://nowhere.attacker.test/hooks", /does not resolve/],
    ["ftp://merchant.example/", /http\(s\)/],
  ])("refuses %s", async (url, reason) => {
    const checked = await checkEndpointUrl(url, PRODUCTION);
    expect(checked.ok).toBe(false);
    if (!checked.ok) expect(checked.reason).toMatch(reason);
  });

  it("accepts an https URL whose every address is public", async () => {
    expect(await checkEndpointUrl("https://merchant.example/hooks", PRODUCTION)).toEqual({ ok: true });
  });

  it("registerEndpoint answers 400 with the reason and stores nothing", async () => {
    const account = await createTestAccount("ssrf");
    await expect(
      registerEndpoint(
        db(),
        account.id,
        { url: "https://metadata.attacker.test/", events: ["payment.succeeded"] },
        PRODUCTION,
      ),
    ).rejects.toMatchObject({ code: "BAD_REQUEST", message: expect.stringMatching(/169\.254\.169\.254/) });
    expect(await db().webhookEndpoint.count({ where: { accountId: account.id } })).toBe(0);
  });
});

describe("every delivery checks the address again and connects to the one it checked", () => {
  it("a name that resolved to a public address at registration and to loopback now is refused, unsent", async () => {
    const receiver = await startReceiver();
    try {
      const account = await createTestAccount("ssrf");
      const url = `http://rebind.attacker.test:${receiver.port}/hooks`;
      // Registered while the name pointed elsewhere (here: a policy that allowed it).
      const endpoint = await registerEndpoint(
        db(),
        account.id,
        { url, events: ["payment.succeeded"] },
        {
          requireHttps: false,
          allowLoopback: false,
          resolve: dns({ "rebind.attacker.test": ["93.184.216.34"] }),
        },
      );
      await sendTestEvent(db(), account.id, endpoint.id);
      const rebound: AddressPolicy = {
        requireHttps: false,
        allowLoopback: false,
        resolve: dns({ "rebind.attacker.test": ["127.0.0.1"] }),
      };
      await deliverDueMessages(db(), { policy: rebound, endpointIds: [endpoint.id], scheduleSeconds: [] });
      const attempt = await waitFor("the attempt", () =>
        db().webhookAttempt.findFirst({ where: { endpointId: endpoint.id } }),
      );
      expect([attempt.outcome, attempt.httpStatus]).toEqual(["failed", null]);
      expect(attempt.responseExcerpt).toMatch(/^refused: rebind\.attacker\.test resolves to 127\.0\.0\.1/);
      expect(receiver.received).toHaveLength(0);
    } finally {
      await receiver.stop();
    }
  });

  it("the connection goes to the checked address, not to a second lookup of the name", async () => {
    const receiver = await startReceiver();
    try {
      const account = await createTestAccount("ssrf");
      // The name exists only in the checked resolution: a second lookup by the system would fail.
      const policy: AddressPolicy = {
        requireHttps: false,
        allowLoopback: true,
        resolve: dns({ "receiver.invalid": ["127.0.0.1"] }),
      };
      const endpoint = await registerEndpoint(
        db(),
        account.id,
        { url: `http://receiver.invalid:${receiver.port}/hooks`, events: ["payment.succeeded"] },
        policy,
      );
      await sendTestEvent(db(), account.id, endpoint.id);
      await waitFor("the delivery", async () => {
        await deliverDueMessages(db(), { policy, endpointIds: [endpoint.id] });
        return receiver.received.length === 1;
      });
      expect(receiver.received[0]?.headers.host).toBe(`receiver.invalid:${receiver.port}`);
    } finally {
      await receiver.stop();
    }
  });
});
