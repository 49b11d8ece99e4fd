/**
 * Stripe's request encoding: `application/x-www-form-urlencoded` bodies and query strings with
 * bracket syntax (`metadata[order_id]=o_1`, `expand[0]=latest_charge`, `types[]=a`,
 * `created[gte]=1700000000`), read into nested objects and arrays of strings.
 */

export type FormValue = string | FormObject | FormValue[];
export interface FormObject {
  [name: string]: FormValue;
}

export class FormSyntaxError extends Error {
  override name = "FormSyntaxError";
}

const KEY = /^([^[\]]+)((?:\[[^[\]]*\])*)$/;
const MAX_DEPTH = 4;

/** The parameters of a form body or a query string; a malformed name throws FormSyntaxError. */
export function parseForm(params: URLSearchParams): FormObject {
  const root: FormObject = {};
  for (const [name, value] of params) {
    const m = KEY.exec(name);
    if (!m?.[1]) throw new FormSyntaxError(`Invalid parameter name: ${name}`);
    const path = [m[1], ...[...(m[2] ?? "").matchAll(/\[([^[\]]*)\]/g)].map((x) => x[1] ?? "")];
    if (path.length > MAX_DEPTH) throw new FormSyntaxError(`Parameter nested too deeply: ${name}`);
    assign(root, path, value, name);
  }
  return arraysOf(root) as FormObject;
}

/** `[]` appends; other segments are names (digits become array indexes once all are read). */
function assign(root: FormObject, path: string[], value: string, name: string): void {
  let node: FormObject = root;
  for (let i = 0; i < path.length; i++) {
    let segment = path[i] as string;
    const last = i === path.length - 1;
    if (segment === "") segment = String(Object.keys(node).length);
    if (last) {
      if (segment in node) throw new FormSyntaxError(`Parameter given twice: ${name}`);
      node[segment] = value;
      return;
    }
    const next = node[segment];
    if (next === undefined) {
      const child: FormObject = {};
      node[segment] = child;
      node = child;
    } else if (typeof next === "object" && !Array.isArray(next)) {
      node = next;
    } else {
      throw new FormSyntaxError(`Parameter ${name} is both a value and a hash`);
    }
  }
}

/** Objects whose keys are all 0…n-1 become arrays, as Stripe reads `a[0]=x&a[1]=y`. */
function arraysOf(value: FormValue): FormValue {
  if (typeof value === "string" || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  const converted: FormObject = {};
  for (const key of keys) converted[key] = arraysOf(value[key] as FormValue);
  const indexed = keys.length > 0 && keys.every((k, i) => /^\d+$/.test(k) && Number(k) === i);
  return indexed ? keys.map((k) => converted[k] as FormValue) : converted;
}

/**
 * The same parameters in one canonical text (names sorted at every level): two requests carry the
 * same parameters exactly when their canonical forms are equal.
 */
export function canonicalForm(value: FormValue): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalForm).join(",")}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalForm(value[k] as FormValue)}`).join(",")}}`;
}
