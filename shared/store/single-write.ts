import { unmarshall } from '@aws-sdk/util-dynamodb';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName, withinDeadline } from './client';
import type { Item } from './collection';
import { LOST_ROUND, whileContended, type HotSpot } from './contention';
import { isConditionFailed, isReplicatedWriteConflict } from './errors';
import { writeHooks, type Write } from './writes';

/**
 * The only way the store changes the table: one item at a time, each write conditional where it
 * must be. No transactions (a global table in multi-Region strong consistency refuses them), so a
 * change commits with one of these writes and every other item it touches is derived from it.
 */
export type { Write } from './writes';

/** A write whose condition failed, with the item as it was then (undefined: there was none). */
export interface Refused {
  refused: Item | undefined;
}

export const isRefused = (outcome: unknown): outcome is Refused =>
  typeof outcome === 'object' && outcome !== null && 'refused' in outcome;

function commandOf(write: Write) {
  const common = { TableName: tableName(), ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const };
  if ('Put' in write) return new PutCommand({ ...write.Put, ...common });
  if ('Update' in write) return new UpdateCommand({ ...write.Update, ...common });
  return new DeleteCommand({ ...write.Delete, ...common });
}

export { writeHooks } from './writes';

/**
 * One attempt: 'written'; Refused when its condition failed (carrying the item as it is, so the
 * caller can tell which rule refused it at no extra read); LOST_ROUND when another Region was
 * writing the same item (nothing written: try again).
 */
export async function writeOnce(write: Write): Promise<'written' | Refused | typeof LOST_ROUND> {
  writeHooks.beforeWrite?.(write);
  try {
    await documentClient.send(commandOf(write) as PutCommand, withinDeadline());
    writeHooks.afterWritten?.(write);
    return 'written';
  } catch (error) {
    if (isConditionFailed(error)) {
      const item = (error as { Item?: Parameters<typeof unmarshall>[0] }).Item;
      return { refused: item ? unmarshall(item) : undefined };
    }
    if (isReplicatedWriteConflict(error)) return LOST_ROUND;
    throw error;
  }
}

/**
 * A derived write: idempotent, so a refused condition means it (or a later change) is already
 * there. Tried again while another Region writes the same item, for as long as the request can
 * wait. True when this call wrote it.
 */
export async function writeDerived(hotSpot: HotSpot, where: Record<string, string>, write: Write): Promise<boolean> {
  return whileContended(hotSpot, where, async () => {
    const outcome = await writeOnce(write);
    return outcome === LOST_ROUND ? LOST_ROUND : outcome === 'written';
  });
}
