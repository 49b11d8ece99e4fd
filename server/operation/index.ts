/** The keyed operation: every money movement (payments, refunds, …) is one instance of it. */
export { completerOptions, type OperationCompleterOptions } from "./completer";
export {
  type AttemptOptions,
  type KeyedOperationDefinition,
  keyedOperation,
  type Refusal,
} from "./keyed-operation";
export { askProvider } from "./provider-call";
