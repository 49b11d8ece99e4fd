import { writeFileSync } from "node:fs";
import type { Books } from "./books";
import type { Violation } from "./invariants";
import type { Journal } from "./journal";

const row = (label: string, value: string | number) => `  ${label.padEnd(34)} ${value}`;
const list = (m: Map<string, number>) =>
  m.size === 0 ? "none" : [...m].map(([k, v]) => `${k} ${v}`).join(", ");

/** The table of what the run did and what it found; the last line is `violations: N`. */
export function printReport(opts: {
  journal: Journal;
  books: Books;
  /** Every invariant checked, in order: each gets a line, held or violated. */
  invariants: string[];
  violations: Violation[];
  seconds: number;
  seed: number;
  profile: string;
}): void {
  const { journal: j, violations } = opts;
  const byStatus = new Map<string, number>();
  for (const a of j.answers) j.count(byStatus, String(a.status ?? "no answer"));
  const keysBy = new Map<string, number>();
  for (const k of j.keys) j.count(keysBy, k.gaveUp);
  const ops = new Map<string, number>();
  for (const o of j.operators)
    j.count(ops, `${o.kind}${o.status === 200 ? "" : ` (${o.status ?? "no answer"})`}`);
  const nearDatabase = j.answers.filter(
    (a) => a.status === 500 && j.overlaps(j.databaseOutages, a.sentAt, a.answeredAt, 10_000),
  ).length;
  const refundsBy = new Map<string, number>();
  for (const a of j.refundAnswers)
    j.count(refundsBy, `${a.status ?? "no answer"}${a.status === 200 ? "" : ` ${a.reason ?? ""}`}`.trim());
  const refundPresses = new Set(j.refundAnswers.map((a) => a.key)).size;
  const rogue = `${j.rogue.length} (${j.rogue.filter((r) => r.looksOurs).length} looking like ours)`;
  const authorized = new Set(
    j.answers.filter((a) => a.status === 200 && a.paymentStatus === "authorized").map((a) => a.paymentId),
  ).size;
  const actionsBy = new Map<string, number>();
  for (const a of j.authorizationAnswers)
    j.count(
      actionsBy,
      `${a.action} ${a.status ?? "no answer"}${a.status === 200 ? "" : ` ${a.reason ?? ""}${a.state ? ` (${a.state})` : ""}`}`.trim(),
    );
  const actionPresses = new Map<string, number>();
  for (const key of new Set(j.authorizationAnswers.map((a) => `${a.mode}\n${a.key}`)))
    j.count(actionPresses, key.split("\n")[0] as string);
  const manual = opts.books.payments.filter((p) => p.captureMethod === "manual");
  const manualBy = new Map<string, number>();
  for (const p of manual)
    j.count(manualBy, p.status === "canceled" && p.failureCode ? `${p.status} (${p.failureCode})` : p.status);
  // Who released the holds that ended canceled: our cancel or expiry (requested_by_customer,
  // abandoned) or the provider's own expiry (automatic).
  const charges = new Map(opts.books.charges.map((c) => [c.id, c]));
  const releasedBy = new Map<string, number>();
  for (const p of manual.filter((x) => x.holds > 0 && x.status === "canceled"))
    j.count(releasedBy, charges.get(p.providerChargeId ?? "")?.cancellationReason ?? "unknown");
  const challengesBy = new Map<string, number>();
  for (const c of j.challenges)
    j.count(challengesBy, `${c.url ? c.behaviour : "no step"} → ${c.finalAnswer ?? "?"}`);
  const challengePresses = new Map<string, number>();
  for (const c of j.challenges)
    for (const p of c.pressed) j.count(challengePresses, `${p.action} ${p.status ?? "no answer"}`);
  const atProvider = new Map<string, number>();
  for (const c of opts.books.challenges) j.count(atProvider, c.outcome ?? "open");
  const hooks = j.merchants;
  const received = new Map<string, number>();
  for (const r of hooks.records) if (r.kind === "request") j.count(received, `${r.receiver}`);
  const messagesBy = new Map<string, number>();
  for (const m of opts.books.webhooks.messages) j.count(messagesBy, m.status);
  const endpointsBy = new Map<string, number>();
  for (const x of opts.books.webhooks.endpoints)
    j.count(
      endpointsBy,
      x.deletedAt ? "deleted" : x.disabledAt ? `disabled (${x.disabledReason})` : "enabled",
    );
  console.log(`\nchaos: profile ${opts.profile}, seed ${opts.seed}, ${opts.seconds} s`);
  console.log("what it did");
  for (const line of [
    row("orders", j.orders),
    row("payments (Pay presses)", j.keys.length),
    row("payment requests", j.answers.length),
    row(
      "answers by status",
      [...byStatus]
        .sort()
        .map(([s, n]) => `${s}: ${n}`)
        .join(", "),
    ),
    row("how presses ended", list(keysBy)),
    row("500s near a PostgreSQL restart", nearDatabase),
    row("SIGKILLs", list(j.kills)),
    row("restarts", list(j.restarts)),
    row("provider faults", list(j.faults as Map<string, number>)),
    row("provider outages", j.providerOutages.length),
    row("operator actions", list(ops)),
    row("refunds (presses / requests)", `${refundPresses} / ${j.refundAnswers.length}`),
    row("refund answers", list(refundsBy)),
    row("authorizations answered", authorized),
    row("manual payments in the books", list(manualBy)),
    row("voided holds, the provider's reason", list(releasedBy)),
    row("capture/cancel presses by mode", list(actionPresses)),
    row("capture/cancel requests", j.authorizationAnswers.length),
    row("capture/cancel answers", list(actionsBy)),
    row("3-D Secure shoppers", j.challenges.length),
    row("3-D Secure: behaviour → last answer", list(challengesBy)),
    row("challenge presses", list(challengePresses)),
    row("challenges at the provider", list(atProvider)),
    row("charges behind our back", rogue),
    row("webhook endpoints at the end", list(endpointsBy)),
    row("webhook messages", list(messagesBy)),
    row("webhook requests received", list(received)),
    row("secret rotations", hooks.secrets.filter((s) => s.overlapSeconds !== null).length),
    row(
      "webhook faults",
      `${hooks.receiverOutages} receiver outages, ${hooks.receiverKillsMidRequest} receiver SIGKILLs mid-request, ${hooks.deliverersKilledMidDelivery} deliverer SIGKILLs mid-delivery`,
    ),
    row(
      "forbidden registrations refused",
      `${hooks.forbiddenRegistrations.filter((r) => r.status === 400).length} of ${hooks.forbiddenRegistrations.length}`,
    ),
    row(
      "provider events (listed: recorded)",
      `${j.providerEvents.listed}: ${list(j.providerEvents.outcomes)}`,
    ),
  ])
    console.log(line);
  for (const note of j.notes) console.log(row("note", note));
  console.log("what it found");
  const byInvariant = new Map<string, Violation[]>();
  for (const v of violations) byInvariant.set(v.invariant, [...(byInvariant.get(v.invariant) ?? []), v]);
  if (violations.length === 0) console.log("  nothing: every invariant held");
  for (const name of opts.invariants) if (!byInvariant.has(name)) console.log(`  held         ${name}`);
  for (const [invariant, vs] of byInvariant) {
    console.log(`  VIOLATED (${vs.length}) ${invariant}`);
    for (const v of vs.slice(0, 5)) console.log(`    - ${v.detail}`);
    if (vs.length > 5) console.log(`    … and ${vs.length - 5} more`);
  }
  console.log(`violations: ${violations.length}`);
}

/** Every violation, one per line, for the reader who needs more than the table's first five. */
export function writeViolations(file: string, violations: Violation[]): void {
  writeFileSync(file, violations.map((v) => `${v.invariant}: ${v.detail}\n`).join(""));
}
