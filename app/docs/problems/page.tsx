import type { Metadata } from "next";
import Link from "next/link";
import { PROBLEM_CONTENT_TYPE, PROBLEM_TYPES } from "@/server/http/problems";

export const metadata: Metadata = { title: "API problem types · Idempotent Checkout" };

/** What each RFC 9457 `type` of the REST API means: the page its type URIs point at. */
export default function ProblemTypesPage() {
  return (
    <main id="main">
      <h1>API problem types</h1>
      <p>
        Errors of the REST API (<code>/api/v1</code>) are <code>{PROBLEM_CONTENT_TYPE}</code> bodies with{" "}
        <code>type</code>, <code>title</code>, <code>status</code> and <code>detail</code>. The operations are
        in the <Link href="/docs/api">API reference</Link>.
      </p>
      <dl>
        {Object.entries(PROBLEM_TYPES).map(([slug, p]) => (
          <div key={slug} id={slug}>
            <dt>
              <code>{p.status}</code> {p.title} <code>#{slug}</code>
            </dt>
            <dd>{p.description}</dd>
          </div>
        ))}
      </dl>
    </main>
  );
}
