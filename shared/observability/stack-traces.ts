import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * Readable stack traces without `--enable-source-maps`: that flag makes Node parse the bundle's
 * source map at every cold start, where we need it only when an unexpected error is logged.
 * Turning source maps on later (`process.setSourceMapsEnabled`) maps only modules loaded after it,
 * never the bundle already running, so the map next to the bundle (`index.mjs.map`) is read here,
 * once, on the first error, and each frame is translated with Node's own SourceMap.
 */
const maps = new Map<string, SourceMap | null>();

function sourceMapOf(file: string): SourceMap | null {
  if (!maps.has(file)) {
    let map: SourceMap | null = null;
    try {
      map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')));
    } catch {
      // No map beside this file (tests run the TypeScript sources): keep its frames as they are.
    }
    maps.set(file, map);
  }
  return maps.get(file)!;
}

const FRAME_LOCATION = /(file:\/\/[^\s()]+|\/[^\s():]+):(\d+):(\d+)/g;

/** A stack with every frame of a source-mapped file pointing at the original source line. */
export function originalStack(stack: string): string {
  return stack.replace(FRAME_LOCATION, (location, path: string, line: string, column: string) => {
    const file = path.startsWith('file://') ? fileURLToPath(path) : path;
    const origin = sourceMapOf(file)?.findOrigin(Number(line), Number(column));
    if (!origin || !('fileName' in origin)) return location;
    return `${origin.fileName}:${origin.lineNumber}:${origin.columnNumber}`;
  });
}

/** The error itself, its stack rewritten in place: call just before logging an unexpected error. */
export function withOriginalStack<T>(error: T): T {
  if (error instanceof Error && error.stack) error.stack = originalStack(error.stack);
  return error;
}
