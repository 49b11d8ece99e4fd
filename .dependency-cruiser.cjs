/**
 * The one-way dependencies of docs/architecture.md, checked by `npm run lint`:
 *   app → server/http → routers → domains (payments, refunds, ledger, outbox, receipts) → keys, db
 * where server/keys binds the workspace package @idempotent-checkout/idempotency to the app's db.
 * with admin a read model beside the routers. A back edge fails the build.
 */
const DOMAINS = "^server/(payments|refunds|operation|ledger|outbox|receipts|reconciler|provider|webhooks)/";
const ROUTERS = "^server/(routers/|trpc\\.ts$|root\\.ts$|context\\.ts$)";
const TESTS = "(\\.test\\.ts$|^server/test/|/testing/|^e2e/|^lab/)";

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "A cycle means two modules are one; split what they share or turn one arrow round.",
      from: { pathNot: TESTS },
      to: { circular: true, pathNot: "^server/generated/" },
    },
    {
      name: "server-not-to-app",
      severity: "error",
      comment: "app/ holds pages and route handlers; the server never reaches into them.",
      from: { path: "^(server|provider)/" },
      to: { path: "^app/" },
    },
    {
      name: "only-app-to-http",
      severity: "error",
      comment: "server/http is the edge: only app/ and scripts (and tests) may use it.",
      from: { path: "^server/", pathNot: `^server/http/|${TESTS}` },
      to: { path: "^server/http/" },
    },
    {
      name: "routers-are-above-domains",
      severity: "error",
      comment: "Domains, the admin read model and the idempotency binding never import tRPC routers.",
      from: { path: `${DOMAINS}|^server/(admin|keys|db|auth)/`, pathNot: TESTS },
      to: { path: ROUTERS },
    },
    {
      name: "domains-not-to-admin",
      severity: "error",
      comment: "The admin is a read model over the domains, never the other way round.",
      from: { path: `${DOMAINS}|^server/(keys|db|auth)/`, pathNot: TESTS },
      to: { path: "^server/admin/" },
    },
    {
      name: "keys-binding-is-a-leaf",
      severity: "error",
      comment:
        "server/keys binds the idempotency package to the app's db and logger: it imports nothing else of the app.",
      from: { path: "^server/keys/", pathNot: TESTS },
      to: { path: "^server/", pathNot: "^server/(keys/|db/|env\\.ts$|log/|generated/|server-only\\.js$)" },
    },
    {
      name: "idempotency-package-through-its-entry",
      severity: "error",
      comment:
        "@idempotent-checkout/idempotency is used by its name, through its entry and sub-paths only (its exports: /sql, /admin, /bench); its files are not the app's to import.",
      from: { pathNot: "^packages/idempotency/" },
      to: {
        path: "^packages/idempotency/",
        pathNot: "^packages/idempotency/dist/(index|entries/(sql|admin|bench))\\.(js|d\\.ts)$",
      },
    },
    {
      name: "idempotency-bench-hooks-for-benchmarks",
      severity: "error",
      comment:
        "The package's /bench sub-path (its hot statements alone) is for benchmarks and tests, never the app.",
      from: { pathNot: TESTS },
      to: { path: "^packages/idempotency/dist/entries/bench\\." },
    },
    {
      name: "ledger-and-outbox-compose-sql-without-keys",
      severity: "error",
      comment:
        "The ledger and the outbox add typed parts to a statement through the package's /sql sub-path; the key store's binding is not theirs.",
      from: { path: "^server/(ledger|outbox)/", pathNot: TESTS },
      to: { path: "^server/keys/" },
    },
    {
      name: "product-never-imports-the-lab",
      severity: "error",
      comment:
        "lab/ (chaos, failover, benchmarks) stands on the product; the product, its scripts and its tests never import it.",
      from: { pathNot: "^lab/" },
      to: { path: "^lab/" },
    },
    {
      name: "shared-is-neutral",
      severity: "error",
      comment:
        "shared/ is for modules the browser bundle and the server both include: it imports neither side.",
      from: { path: "^shared/" },
      to: { path: "^(server|app|provider|scripts|packages)/" },
    },
    {
      name: "no-unresolvable",
      severity: "error",
      comment:
        "An import that does not resolve: a typo, or a deep import of a package's file its `exports` do not offer.",
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: "db-is-a-leaf",
      severity: "error",
      comment:
        "server/db holds the client and migrations; it depends on nothing of the app but env and the logger.",
      from: { path: "^server/db/", pathNot: TESTS },
      to: { path: "^server/", pathNot: "^server/(db/|env\\.ts$|log/|generated/|server-only\\.js$)" },
    },
    {
      name: "log-is-a-leaf",
      severity: "error",
      comment: "Every layer may log, so the logger depends on nothing of the app but env.",
      from: { path: "^server/log/", pathNot: TESTS },
      to: { path: "^server/", pathNot: "^server/(log/|env\\.ts$|server-only\\.js$)" },
    },
    {
      name: "ledger-below-payments",
      severity: "error",
      comment:
        "The ledger books what payments and refunds tell it; it knows nothing of them, the outbox or receipts.",
      from: { path: "^server/ledger/", pathNot: TESTS },
      to: { path: "^server/(payments|refunds|outbox|receipts)/" },
    },
    {
      name: "outbox-below-its-users",
      severity: "error",
      comment: "The outbox carries events; it knows nothing of who writes or consumes them.",
      from: { path: "^server/outbox/", pathNot: TESTS },
      to: { path: "^server/(payments|refunds|receipts|ledger|webhooks)/" },
    },
    {
      name: "payments-and-refunds-apart",
      severity: "error",
      comment:
        "Payments and refunds are two keyed operations side by side: neither imports the other; what they share lives below them (provider, ledger, outbox, keys, db).",
      from: { path: "^server/(payments|refunds)/", pathNot: TESTS },
      to: { path: "^server/(payments|refunds)/", pathNot: "^server/$1/" },
    },
    {
      name: "operation-below-its-instances",
      severity: "error",
      comment:
        "server/operation is what every keyed operation shares (the provider call and its mark, the completer); payments and refunds use it, never the other way round.",
      from: { path: "^server/operation/", pathNot: TESTS },
      to: { path: "^server/(payments|refunds)/" },
    },
    {
      name: "provider-binding-is-a-leaf",
      severity: "error",
      comment:
        "server/provider binds the provider's client to the app's env; a Stripe adapter replaces it without touching its users.",
      from: { path: "^server/provider/", pathNot: TESTS },
      to: { path: "^server/", pathNot: "^server/(provider/|env\\.ts$)" },
    },
    {
      name: "reconciler-reads-the-books",
      severity: "error",
      comment:
        "The reconciler compares the provider with the books (tables), not with the operations that wrote them.",
      from: { path: "^server/reconciler/", pathNot: TESTS },
      to: { path: "^server/(payments|refunds)/" },
    },
    {
      name: "payments-before-receipts",
      severity: "error",
      comment: "Receipts follow payments and refunds through the outbox; neither reaches up into receipts.",
      from: { path: "^server/(payments|refunds)/", pathNot: TESTS },
      to: { path: "^server/receipts/" },
    },
    {
      name: "webhooks-follow-the-outbox",
      severity: "error",
      comment:
        "Merchant webhooks learn of payments and refunds only through the outbox's events, and no domain reaches into them (decision 0185).",
      from: { path: "^server/webhooks/", pathNot: TESTS },
      to: {
        path: "^server/(payments|refunds|operation|ledger|receipts|reconciler|provider|provider-events)/",
      },
    },
    {
      name: "domains-not-to-webhooks",
      severity: "error",
      comment: "Payments, refunds, the ledger and receipts know nothing of merchant webhooks.",
      from: {
        path: "^server/(payments|refunds|operation|ledger|receipts|reconciler|provider)/",
        pathNot: TESTS,
      },
      to: { path: "^server/webhooks/" },
    },
    {
      name: "packages-stand-alone",
      severity: "error",
      comment:
        "A workspace package is published on its own: it imports its own files and its dependencies, never the app.",
      from: { path: "^packages/([^/]+)/" },
      to: { pathNot: ["^packages/$1/", "node_modules"], dependencyTypesNot: ["core"] },
    },
    {
      name: "no-trpc-internals",
      severity: "error",
      comment: "Only tRPC's public API: its internals change without notice.",
      from: {},
      to: { path: "@trpc/server/(dist/)?unstable-core-do-not-import" },
    },
    {
      name: "no-test-code-in-production",
      severity: "error",
      comment: "Test tooling lives in server/test/ (and testing/ folders) and ships nowhere.",
      from: { pathNot: TESTS },
      to: { path: TESTS },
    },
  ],
  options: {
    doNotFollow: { path: ["node_modules", "server/generated"] },
    exclude: { path: ["^\\.next", "^server/generated/", "^\\.data/"] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".tsx", ".js", ".mjs", ".cjs", ".json"],
    },
  },
};
