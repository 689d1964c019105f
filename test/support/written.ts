/** A store write the test needs to have happened: the store's refusals are strings (shared/store/collection.ts). */
export function written<T extends object>(outcome: T | string): T {
  if (typeof outcome === 'string') throw new Error(`the store refused the write: ${outcome}`);
  return outcome;
}
