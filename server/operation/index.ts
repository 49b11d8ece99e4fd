/** The keyed operation: every money movement (payments, refunds, …) is one instance of it. */
export { completerOptions, type OperationCompleterOptions } from "./completer";
export {
  type AttemptOptions,
  type KeyedOperationDefinition,
  keyedOperation,
  type Refusal,
  writeAlongside,
} from "./keyed-operation";
export { askProvider, providerFailure } from "./provider-call";
