/**
 * Reading a request's parameters the way Stripe checks them: unknown names, missing ones and
 * malformed values are refused with Stripe's codes (`parameter_unknown`, `parameter_missing`,
 * `parameter_invalid_integer`, …) and the offending `param`, before anything is stored.
 */
import type { FormObject, FormValue } from "./form";

export class ParamError extends Error {
  override name = "ParamError";
  readonly code: string | undefined;
  readonly param: string;
  readonly status: number;
  constructor(message: string, param: string, code?: string, status = 400) {
    super(message);
    this.param = param;
    this.code = code;
    this.status = status;
  }
}

/** A ParamError from any copy of this module. */
export function isParamError(error: unknown): error is ParamError {
  return (error as { name?: unknown } | null)?.name === "ParamError";
}

/** Stripe's largest amount in a currency's smallest unit (eight digits). */
export const MAX_AMOUNT = 99_999_999;

export class Params {
  constructor(
    private readonly form: FormObject,
    private readonly prefix = "",
  ) {}

  /** Refuses any parameter not in `allowed`. */
  only(...allowed: string[]): this {
    for (const name of Object.keys(this.form)) {
      if (!allowed.includes(name)) {
        throw new ParamError(
          `Received unknown parameter: ${this.name(name)}`,
          this.name(name),
          "parameter_unknown",
        );
      }
    }
    return this;
  }

  isHash(name: string): boolean {
    const value = this.form[name];
    return typeof value === "object" && !Array.isArray(value);
  }

  has(name: string): boolean {
    return this.form[name] !== undefined;
  }

  string(name: string, opts: { required?: boolean; max?: number } = {}): string | undefined {
    const value = this.form[name];
    if (value === undefined || value === "") {
      if (opts.required) throw this.missing(name);
      return undefined;
    }
    if (typeof value !== "string")
      throw new ParamError(`Invalid string: ${this.name(name)}`, this.name(name), "parameter_invalid_string");
    if (opts.max !== undefined && value.length > opts.max) {
      throw new ParamError(
        `Invalid string: ${value.slice(0, 20)}...; must be at most ${opts.max} characters`,
        this.name(name),
        "string_length_exceeded",
      );
    }
    return value;
  }

  required(name: string, opts: { max?: number } = {}): string {
    return this.string(name, { ...opts, required: true }) as string;
  }

  integer(name: string, opts: { required?: boolean; min?: number; max?: number } = {}): number | undefined {
    const text = this.string(name, { required: opts.required });
    if (text === undefined) return undefined;
    if (!/^-?\d{1,15}$/.test(text))
      throw new ParamError(`Invalid integer: ${text}`, this.name(name), "parameter_invalid_integer");
    const n = Number(text);
    if (opts.min !== undefined && n < opts.min)
      throw new ParamError(
        `This value must be greater than or equal to ${opts.min}.`,
        this.name(name),
        "parameter_invalid_integer",
      );
    if (opts.max !== undefined && n > opts.max)
      throw new ParamError(
        `This value must be less than or equal to ${opts.max}.`,
        this.name(name),
        "parameter_invalid_integer",
      );
    return n;
  }

  /** An amount in minor units: Stripe's `amount_too_small` / `amount_too_large`. */
  amount(name: string, opts: { required?: boolean } = {}): number | undefined {
    const n = this.integer(name, opts);
    if (n === undefined) return undefined;
    if (n < 1)
      throw new ParamError(
        "Amount must be at least 1 in the currency's smallest unit.",
        this.name(name),
        "amount_too_small",
      );
    if (n > MAX_AMOUNT)
      throw new ParamError(
        `Amount must be no more than ${MAX_AMOUNT} in the currency's smallest unit.`,
        this.name(name),
        "amount_too_large",
      );
    return n;
  }

  boolean(name: string): boolean | undefined {
    const text = this.string(name);
    if (text === undefined) return undefined;
    if (text === "true") return true;
    if (text === "false") return false;
    throw new ParamError(`Invalid boolean: ${text}`, this.name(name), "parameter_invalid_boolean");
  }

  oneOf<T extends string>(name: string, values: readonly T[]): T | undefined {
    const text = this.string(name);
    if (text === undefined) return undefined;
    if (!(values as readonly string[]).includes(text)) {
      throw new ParamError(
        `Invalid ${this.name(name)}: must be one of ${values.join(", ")}`,
        this.name(name),
        "parameter_invalid",
      );
    }
    return text as T;
  }

  currency(name: string): string {
    const text = this.required(name);
    if (!/^[A-Za-z]{3}$/.test(text))
      throw new ParamError(`Invalid currency: ${text.toLowerCase()}.`, this.name(name));
    return text.toLowerCase();
  }

  /** Stripe's metadata: at most 50 keys of ≤ 40 characters, values ≤ 500; an empty value unsets. */
  metadata(name = "metadata"): Record<string, string> | undefined {
    const value = this.form[name];
    if (value === undefined || value === "") return undefined;
    if (typeof value !== "object" || Array.isArray(value))
      throw new ParamError("Invalid hash", this.name(name), "parameter_invalid");
    const out: Record<string, string> = {};
    const entries = Object.entries(value);
    if (entries.length > 50)
      throw new ParamError("Metadata can have at most 50 keys.", this.name(name), "parameter_invalid");
    for (const [key, v] of entries) {
      if (typeof v !== "string")
        throw new ParamError("Invalid metadata value", `${name}[${key}]`, "parameter_invalid");
      if (key.length > 40)
        throw new ParamError(
          "Metadata keys can be at most 40 characters.",
          `${name}[${key}]`,
          "parameter_invalid",
        );
      if (v.length > 500)
        throw new ParamError(
          "Metadata values can be at most 500 characters.",
          `${name}[${key}]`,
          "parameter_invalid",
        );
      if (v !== "") out[key] = v;
    }
    return out;
  }

  /** A nested hash's parameters, named `name[…]` in errors. */
  hash(name: string): Params | undefined {
    const value = this.form[name];
    if (value === undefined) return undefined;
    if (typeof value !== "object" || Array.isArray(value))
      throw new ParamError("Invalid hash", this.name(name), "parameter_invalid");
    return new Params(value, `${this.name(name)}[`);
  }

  /** An array of strings (`types[]=a&types[]=b` or `types[0]=a`). */
  strings(name: string): string[] | undefined {
    const value: FormValue | undefined = this.form[name];
    if (value === undefined) return undefined;
    if (!Array.isArray(value) || value.some((v) => typeof v !== "string"))
      throw new ParamError("Invalid array", this.name(name), "parameter_invalid");
    return value as string[];
  }

  private name(name: string): string {
    return this.prefix ? `${this.prefix}${name}]` : name;
  }

  private missing(name: string): ParamError {
    return new ParamError(
      `Missing required param: ${this.name(name)}.`,
      this.name(name),
      "parameter_missing",
    );
  }
}
