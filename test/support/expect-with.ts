import { fileURLToPath } from 'node:url';
import { expect } from '@jest/globals';

/**
 * `expect(value)` whose failures say what was being checked: jest's `expect` takes no message, so
 * `expectWith(response.status, path).toBe(404)` puts `path` above jest's own expected/received.
 */
export function expectWith<T>(value: T, message: string): ReturnType<typeof expect<T>> {
  return explained(expect(value), message);
}

const THIS_FILE = fileURLToPath(import.meta.url);

function explained<M extends object>(matchers: M, message: string): M {
  return new Proxy(matchers, {
    get(target, property, receiver) {
      const member = Reflect.get(target, property, receiver);
      if (typeof member === 'object' && member !== null) return explained(member, message); // .not, .resolves, .rejects
      if (typeof member !== 'function') return member;
      return (...args: unknown[]) => {
        try {
          const result = member.apply(target, args);
          return isThenable(result)
            ? result.then(undefined, (error: unknown) => {
                throw prefixed(error, message);
              })
            : result;
        } catch (error) {
          throw prefixed(error, message);
        }
      };
    },
  });
}

// Not `instanceof Promise` either, for the same reason.
const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof value === 'object' && value !== null && typeof (value as PromiseLike<unknown>).then === 'function';

function prefixed(error: unknown, message: string): unknown {
  // Not `instanceof Error`: jest's assertion errors come from another realm than the test's.
  if (typeof error !== 'object' || error === null || typeof (error as Error).message !== 'string') return error;
  const failure = error as Error;
  const stack = failure.stack ?? '';
  const original = failure.message;
  failure.message = `${message}\n\n${original}`;
  // This file's frames out, so that jest's code frame shows the test's line.
  const frames = stack.split('\n').filter((line) => !(line.trimStart().startsWith('at ') && line.includes(THIS_FILE)));
  failure.stack = frames.join('\n').replace(original, failure.message);
  return failure;
}
