import { describe, expect, expectTypeOf, it } from "vitest";
import { type ApiProblemCode, type CheckoutErrorCode, problemCode } from "./errors.js";
import type { PaymentMethod } from "./intents.js";

describe("error codes and payment methods are unions", () => {
  it("names each problem type of the API by its slug, and about:blank by its status", () => {
    expectTypeOf<"rate-limited" | "forbidden" | "card-declined">().toExtend<ApiProblemCode>();
    expect(problemCode({ type: "/docs/problems#rate-limited", title: "", status: 429, detail: "" })).toBe(
      "rate-limited",
    );
    expect(problemCode({ type: "about:blank", title: "METHOD_NOT_SUPPORTED", status: 405, detail: "" })).toBe(
      "http-405",
    );
  });

  it("refuses, at compile time, a code neither the API nor the client has, and a method that is no pm_ id", () => {
    // @ts-expect-error: a typo is no code of the API's or the client's
    const code: CheckoutErrorCode = "card-declind";
    // @ts-expect-error: payment method ids start with pm_
    const method: PaymentMethod = "visa";
    expect([code, method]).toHaveLength(2);
  });
});
