/**
 * Runs each write after the writes this process already started on the same hot spot, so writers
 * in one process take numbers one after another instead of racing each other for them.
 */
const queues = new Map<string, Promise<unknown>>();

export function inTurn<T>(spot: string, write: () => Promise<T>): Promise<T> {
  const previous = queues.get(spot) ?? Promise.resolve();
  const mine = previous.then(write, write);
  const settled = mine.catch(() => undefined);
  queues.set(spot, settled);
  void settled.then(() => {
    if (queues.get(spot) === settled) queues.delete(spot);
  });
  return mine;
}
