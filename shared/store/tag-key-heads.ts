import { pendingChangeOf, pendingOf, readHead, writeOut, type Head } from './tag-key-log';
import { repairing } from './write-outcome';
import type { ReservedTagKey } from '../reserved-tag-keys/reserved-tag-key';

/**
 * What this process knows of organizations' heads (tag-key-log.ts): each head as last seen, how far
 * its changes are known to be written out, and when each key it handed out was read, so a writer
 * commits on the head it knows without reading it again, and a stale one costs only a retry.
 */

/**
 * What this process last saw of an organization's head, and up to which version it knows the
 * changes are written out. A stale head only costs a retry: every commit is conditioned on the
 * version it expects. Bounded, dropping the oldest entry first.
 */
export interface SeenHead {
  head: Head;
  appliedVersion: number;
  /** Versions above appliedVersion this process wrote out (their writers finished out of order). */
  appliedAhead: readonly number[];
  /** When it was observed (performance.now()): a key read before that may predate changes it has. */
  observedAt: number;
}
const MAX_SEEN_HEADS = 10_000;
const seenHeads = new Map<string, SeenHead>();

/**
 * Takes in a head as read or committed, `appliedVersion` (every change up to it is written out)
 * and the versions `alsoApplied`. What is known written out only grows, and the head is never
 * replaced by an older one: a writer can finish after a later commit of this process.
 */
export function remember(
  head: Head,
  appliedVersion = head.version - pendingOf(head).length,
  alsoApplied: readonly number[] = [],
): SeenHead {
  const before = seenHeads.get(head.organization);
  const newer = !before || head.version > before.head.version;
  let applied = Math.max(before?.appliedVersion ?? 0, appliedVersion);
  const ahead = new Set([...(before?.appliedAhead ?? []), ...alsoApplied]);
  while (ahead.delete(applied + 1)) applied++;
  const seen: SeenHead = {
    head: newer ? head : before.head,
    appliedVersion: applied,
    appliedAhead: [...ahead].filter((version) => version > applied),
    observedAt: newer ? performance.now() : before.observedAt,
  };
  seenHeads.delete(head.organization);
  if (seenHeads.size >= MAX_SEEN_HEADS) seenHeads.delete(seenHeads.keys().next().value!);
  seenHeads.set(head.organization, seen);
  return seen;
}

/** The head as this process knows it, or read now. */
export async function knownHead(organization: string): Promise<SeenHead> {
  return seenHeads.get(organization) ?? remember(await readHead(organization));
}

/** What this process knows of an organization's head, if anything. */
export const seenHead = (organization: string): SeenHead | undefined => seenHeads.get(organization);

/** When each key handed out by findReservedTagKey was read (performance.now()), and the version of its last change. */
const reads = new WeakMap<ReservedTagKey, { at: number; v: number }>();

/** Remembers that `key` was read now, as the change of version `v` left it. */
export const noteRead = (key: ReservedTagKey, v: number): void => {
  reads.set(key, { at: performance.now(), v });
};

/**
 * Whether `key`, with the head's changes over it, is the key at the head `seen`: it was read after
 * the head was observed (its copy then holds every change up to the head but those the head
 * holds), or its last change is the head's version, or the head holds a change of it (its newest).
 */
export function currentAt(key: ReservedTagKey, seen: SeenHead): boolean {
  const read = reads.get(key);
  if (!read) return false;
  return read.at > seen.observedAt || read.v === seen.head.version || pendingChangeOf(seen.head, key.id) !== undefined;
}

/**
 * Writes out the head's prior change, the one the next commit drops from it, unless this process
 * knows it is out; every change before it is. 'wait' while its own writer may still be at it.
 */
export const settle = (seen: SeenHead) =>
  repairing(async (): Promise<true | 'wait'> => {
    const prior = seen.head.prior;
    if (!prior || seen.appliedVersion >= prior.version) return true;
    if ((await writeOut(seen.head, prior, true)) === 'wait') return 'wait';
    remember(seen.head, prior.version);
    return true;
  });
