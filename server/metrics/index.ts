export { type Metrics, metrics } from "./registry";
export { refreshDatabaseGauges } from "./scrape";
