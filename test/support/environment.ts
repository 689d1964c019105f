import vm from 'node:vm';
import { TestEnvironment } from 'jest-environment-node';

/**
 * Jest's Node environment, without one line of noise: Node warns once per process that VM modules,
 * on which jest runs ES modules, are experimental. The warning is spent here, on an empty module
 * with warnings muted for that one call (as jest does for its type stripper), so a green run prints
 * no warning and every other warning still shows.
 */
if (typeof vm.SourceTextModule === 'function') {
  const emitWarning = Object.getOwnPropertyDescriptor(process, 'emitWarning')!;
  process.emitWarning = () => undefined;
  try {
    new vm.SourceTextModule('');
  } finally {
    Object.defineProperty(process, 'emitWarning', emitWarning);
  }
}

export default TestEnvironment;
