export { type Metrics, metrics } from "./registry";
export { metricsResponse, refreshDatabaseGauges } from "./scrape";
