// Secrets a person typed rather than generated: runs along the alphabet, the digits or a keyboard
// row ("abcdef…", "987654…", "qwerty…"), which pass a length and distinct-character test.

const KEYBOARD_ROWS = ["1234567890", "qwertyuiop", "asdfghjkl", "zxcvbnm"];

/** Whether `b` follows `a` on a keyboard row, either way. */
function keyboardNeighbours(a: string, b: string): boolean {
  return KEYBOARD_ROWS.some((row) => {
    const i = row.indexOf(a);
    const j = row.indexOf(b);
    return i >= 0 && j >= 0 && Math.abs(i - j) === 1;
  });
}

/** Steps from one character to the next that a pattern explains: the same, ±1, or a key's neighbour. */
function patternedSteps(value: string): number {
  const chars = [...value];
  let steps = 0;
  for (let i = 1; i < chars.length; i++) {
    const a = chars[i - 1] as string;
    const b = chars[i] as string;
    const delta = (b.codePointAt(0) ?? 0) - (a.codePointAt(0) ?? 0);
    if (Math.abs(delta) <= 1 || keyboardNeighbours(a.toLowerCase(), b.toLowerCase())) steps++;
  }
  return steps;
}

/**
 * A reason when more than half of the steps follow a pattern; a random base64 value has about
 * one in twelve such steps, so a generated secret is never refused here.
 */
export function sequenceWeakness(value: string): string | null {
  if (value.length < 2) return null;
  return patternedSteps(value) * 2 > value.length - 1 ? "looks like a typed sequence, not random" : null;
}
