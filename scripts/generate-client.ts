import { writeFileSync } from "node:fs";
import { CLIENT_TYPES_PATH, generateClientTypes } from "./lib/client-types";

// `npm run generate:client`: rewrites the client package's types from the OpenAPI document.
writeFileSync(CLIENT_TYPES_PATH, await generateClientTypes());
console.log(`wrote ${CLIENT_TYPES_PATH}`);
