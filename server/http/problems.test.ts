import { TRPCError } from "@trpc/server";
import { describe, expect, it } from "vitest";
import { ErrorDetails } from "../errors";
import { problemFromError } from "./problems";

describe("problems of our own for 403 and 429", () => {
  it("a read-only key's refusal is a forbidden problem", () => {
    const error = new TRPCError({ code: "FORBIDDEN", message: "This API key is read-only." });
    expect(problemFromError(error, 403)).toMatchObject({
      type: "/docs/problems#forbidden",
      status: 403,
      detail: "This API key is read-only.",
    });
  });

  it("a spent allowance is a rate-limited problem, with its reason", () => {
    const error = new TRPCError({
      code: "TOO_MANY_REQUESTS",
      message: "Too many requests: retry after 12 s.",
      cause: new ErrorDetails({ reason: "rate_limited" }, 12),
    });
    expect(problemFromError(error, 429)).toMatchObject({
      type: "/docs/problems#rate-limited",
      title: "Too many requests",
      status: 429,
      reason: "rate_limited",
    });
  });
});
