/**
 * A type guard by a process-wide brand (`Symbol.for`), for values of this module's classes. Next
 * bundles a module once per layer and process-wide singletons cross the layers, so class
 * identity (`instanceof`) fails for a value made by another layer's copy (docs/decisions/0095).
 */
export function brandGuard<T>(brand: symbol): (value: unknown) => value is T {
  return (value: unknown): value is T => typeof value === "object" && value !== null && brand in value;
}
