/**
 * Where `npm run openapi` writes (main.ts). Apart from it, so that a reader of the files does not
 * load openapi-typescript: a dependency of it imports `node:process` as an ES module, which opens
 * the process's stdin, and a jest worker holding stdin open cannot exit.
 */
export const DOCUMENT_FILE = 'docs/openapi.json';
export const TYPES_FILE = 'infra/openapi/generated/openapi-types.ts';
