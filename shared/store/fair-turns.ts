import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from './client';
import type { Key } from './keys';

/**
 * Fair turns on a busy run or organization: backoff alone lets the writer that just took a number
 * take the next one too, and one that keeps losing can lose until its deadline. So the head names
 * the oldest writer still waiting (`turnSince`, `turnUntil`), claimed after losing for
 * CLAIM_AFTER_MS; while the claim holds only that writer or an older one may commit, and it lapses
 * after TURN_LEASE_MS, so a writer that gave up or crashed holds no one back for longer
 * (docs/design.md, "Fair turns on a run").
 */
export interface Turn {
  /** When this request started waiting: the older, the sooner its turn. */
  since: number;
  /** Whether the record names this request as the writer whose turn it is. */
  held: boolean;
}

/** A record's turn attributes, as a refused commit found them. */
export interface TurnNow {
  turnSince?: number;
  turnUntil?: number;
}

const TURN_LEASE_MS = 1_000;
/**
 * Writers claim turns only once they have waited this long: under light contention writers take
 * numbers as they come (one call each, the most a run can take), and a writer that keeps losing
 * gets the next turn instead of losing until its deadline.
 */
export const CLAIM_AFTER_MS = 500;
/**
 * A claim is best effort and bounded: it gives up after this long (its outcome then unknown, and
 * harmless: an unknown claim lapses with its lease), so an attempt with a claim still ends in time.
 */
export const CLAIM_TIMEOUT_MS = 300;

export const newTurn = (): Turn => ({ since: Date.now(), held: false });

/**
 * The commit's condition and update for `turn`: the holder releases its claim; anyone else waits
 * for an older one. `alsoRemove`: the commit's own attributes to remove (an update has one REMOVE).
 */
export function fairCommit(turn: Turn, alsoRemove: string[] = []) {
  const removed = [...alsoRemove, ...(turn.held ? ['turnSince', 'turnUntil'] : [])];
  return {
    condition: turn.held
      ? 'turnSince = :since'
      : '(attribute_not_exists(turnSince) OR turnSince >= :since OR turnUntil < :now)',
    remove: removed.length === 0 ? '' : ` REMOVE ${removed.join(', ')}`,
    values: { ':since': turn.since, ...(turn.held ? {} : { ':now': Date.now() }) } as Record<string, number>,
  };
}

/**
 * Claims the record's next turn for `turn`; false when an older writer holds it (or another write
 * got there first). `organization`: the record's, when it has one (a run's), so a claim never
 * makes a record of a run that is not there.
 */
export async function claimTurn(
  record: Key,
  organization: string | undefined,
  turn: Turn,
  now: TurnNow,
): Promise<boolean> {
  const claimed = now.turnSince;
  if (claimed !== undefined && claimed < turn.since && (now.turnUntil ?? 0) >= Date.now()) return false;
  try {
    await documentClient.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: record,
        UpdateExpression: 'SET turnSince = :since, turnUntil = :until',
        ConditionExpression: `${organization === undefined ? 'attribute_exists(PK)' : 'organization = :organization'} AND (attribute_not_exists(turnSince) OR turnSince >= :since OR turnUntil < :now)`,
        ExpressionAttributeValues: {
          ':since': turn.since,
          ':until': Date.now() + TURN_LEASE_MS,
          ':now': Date.now(),
          ...(organization === undefined ? {} : { ':organization': organization }),
        },
      }),
      { abortSignal: AbortSignal.timeout(CLAIM_TIMEOUT_MS) },
    );
    turn.held = true;
    return true;
  } catch {
    // Someone older claimed it, a commit was writing the record at that moment, or the store is
    // slow: wait a round. Nothing but the claim was at stake, and an unanswered one lapses.
    return false;
  }
}
