import { describe, expect, it } from "vitest";
import { checkDecisionLinks, parseDecision, renderDecisionIndex } from "./decisions";

const record = (frontMatter: string, heading = "# 12. A title") =>
  `---\n${frontMatter}\n---\n${heading}\n\nBody.\n`;

describe("decision records", () => {
  it("reads the front-matter and the numbered heading", () => {
    const d = parseDecision(
      "0012-a-title.md",
      record("status: accepted # a comment\ndate: 2026-12-04\nsupersedes: [3]"),
    );
    expect(d).toEqual({
      status: "accepted",
      date: "2026-12-04",
      supersedes: [3],
      number: 12,
      title: "A title",
      file: "0012-a-title.md",
    });
  });

  it("refuses a record without front-matter, as the old `Status:` line had it", () => {
    expect(() =>
      parseDecision("0012-a-title.md", "# 12. A title\n\nStatus: accepted · 2026-12-01\n"),
    ).toThrow(/0012-a-title\.md: must open with front-matter/);
  });

  it("refuses an unknown status, a missing date, a stray field and a heading with another number", () => {
    expect(() => parseDecision("0012-a.md", record("status: Accepted\ndate: 2026-12-04"))).toThrow(/status/);
    expect(() => parseDecision("0012-a.md", record("status: accepted"))).toThrow(/date/);
    expect(() =>
      parseDecision("0012-a.md", record("status: accepted\ndate: 2026-12-04\nrevised: yes")),
    ).toThrow(/revised/);
    expect(() =>
      parseDecision("0012-a.md", record("status: accepted\ndate: 2026-12-04", "# 0012: A")),
    ).toThrow(/must open with front-matter/);
    expect(() => parseDecision("0012-a.md", record("status: accepted\ndate: 2026-12-04", "# 13. A"))).toThrow(
      /heading says 13/,
    );
  });

  it("wants a partly superseded record to say what is true now, and a superseded one to name its successor", () => {
    expect(() =>
      parseDecision("0012-a.md", record("status: accepted\ndate: 2026-12-04\nsuperseded_by: [20]")),
    ).toThrow(/partly: true/);
    expect(() =>
      parseDecision(
        "0012-a.md",
        record("status: accepted\ndate: 2026-12-04\nsuperseded_by: [20]\npartly: true"),
      ),
    ).toThrow(/now/);
    expect(() => parseDecision("0012-a.md", record("status: superseded\ndate: 2026-12-04"))).toThrow(
      /superseded_by/,
    );
  });

  it("finds a supersession named on one side only, or naming no record", () => {
    const old = parseDecision("0012-a.md", record("status: accepted\ndate: 2026-12-01"));
    const newer = parseDecision(
      "0020-b.md",
      record("status: accepted\ndate: 2026-12-04\nsupersedes: [12, 14]", "# 20. B"),
    );
    expect(checkDecisionLinks([old, newer])).toEqual([
      "0012-a.md: add 20 to superseded_by (0020-b.md supersedes it)",
      "0020-b.md: supersedes 14, which does not exist",
    ]);
  });

  it("lists records by number, with what is true now for the ones superseded in part", () => {
    const partly = parseDecision(
      "0012-a.md",
      record('status: accepted\ndate: 2026-12-01\nsuperseded_by: [20]\npartly: true\nnow: "The rest holds."'),
    );
    const newer = parseDecision(
      "0020-b.md",
      record("status: accepted\ndate: 2026-12-04\nsupersedes: [12]", "# 20. B"),
    );
    const index = renderDecisionIndex([newer, partly]);
    expect(index.indexOf("| 0012 |")).toBeLessThan(index.indexOf("| 0020 |"));
    expect(index).toContain(
      "| 0012 | [A title](0012-a.md) | accepted; in part superseded by [0020](0020-b.md) | 2026-12-01 |",
    );
    expect(index).toContain("- [0012](0012-a.md): The rest holds.");
  });
});
