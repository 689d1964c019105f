import { InvalidAttribute, NotFound } from '../jsonapi/errors';
import { lostRound, whileContended } from '../store/contention';
import type { Listed, Range } from '../store/collection';
import { isId } from '../ids';
import {
  deleteStoredReservedTagKey,
  findReservedTagKey,
  insertReservedTagKey,
  listReservedTagKeys,
  updateStoredReservedTagKey,
} from '../store/reserved-tag-keys';
import { countMetric, METRIC } from '../observability/metrics';
import { isReplay, type Receipt } from '../store/receipts';
import { firstAnswer, replayed, type Created } from '../http/safe-retries';
import {
  parseCreateAttributes,
  parseUpdateAttributes,
  type ReservedTagKey,
  type ReservedTagKeyChanges,
} from './reserved-tag-key';
import { KEYS_PER_ORGANIZATION } from './key-rule';

/** Checks the caller's role in an organization (throws 404 or 403); see ApiRequest.authorize. */
export type Authorize = (organization: string) => unknown;

const nameTaken = () => new InvalidAttribute('Key has already been taken', '/data/attributes/key');
const organizationFull = () =>
  new InvalidAttribute(
    `Organization has reached its limit of ${KEYS_PER_ORGANIZATION.toLocaleString('en')} reserved tag keys: delete one to add another`,
  );

export async function listKeys(
  organization: string,
  range: Range,
  authorize: Authorize,
): Promise<Listed<ReservedTagKey>> {
  authorize(organization);
  return listReservedTagKeys(organization, range);
}

/** Authorization comes before validation: a caller who may not create learns nothing from its body. */
type Attributes = Record<string, unknown>;

/** A retry of a create that committed (same receipt) gets the key it made (see shared/http/safe-retries.ts). */
export async function createKey(
  organization: string,
  attributes: Attributes,
  authorize: Authorize,
  receipt: Receipt,
): Promise<Created<ReservedTagKey>> {
  authorize(organization);
  const created = await insertReservedTagKey(organization, parseCreateAttributes(attributes), receipt);
  if (isReplay<ReservedTagKey>(created)) return replayed(receipt, created);
  if (created === 'full') throw organizationFull();
  if (typeof created === 'string') throw nameTaken();
  countMetric(METRIC.reservedTagKeyCreated, { reservedTagKeyId: created.id, organization });
  return firstAnswer(created);
}

/** Finds a key by id for a caller: 404 for ids of the wrong shape, unknown ids and keys it cannot see. */
async function findForCaller<T extends ReservedTagKey>(
  id: string | undefined,
  authorize: Authorize,
  find: (id: string) => Promise<T | undefined>,
): Promise<T> {
  const found = isId('rtk', id) ? await find(id) : undefined;
  if (!found) throw new NotFound();
  authorize(found.organization);
  return found;
}

const changesAnything = (current: ReservedTagKey, changes: ReservedTagKeyChanges) =>
  (changes.key !== undefined && changes.key !== current.key) ||
  (changes.disableOverrides !== undefined && changes.disableOverrides !== current.disableOverrides);

/**
 * Partial update; `updated-at` moves only when something changed (a no-op PATCH writes nothing).
 * A concurrent rename or delete that won the race ('gone') means: read the key again and re-apply,
 * for as long as the request can wait, so the answer is the one a serial order gives (404 once it
 * is deleted, the change applied to the renamed key otherwise).
 */
export async function updateKey(
  id: string | undefined,
  attributes: Attributes,
  authorize: Authorize,
): Promise<ReservedTagKey> {
  let changes: ReservedTagKeyChanges | undefined;
  return whileContended('organization', { reservedTagKeyId: String(id) }, async () => {
    const current = await findForCaller(id, authorize, findReservedTagKey);
    changes ??= parseUpdateAttributes(attributes);
    if (!changesAnything(current, changes)) return current;
    const updated = await updateStoredReservedTagKey(current, changes);
    if (updated === 'gone') return lostRound();
    if (updated === 'name-taken') throw nameTaken();
    countMetric(METRIC.reservedTagKeyUpdated, { reservedTagKeyId: updated.id, organization: updated.organization });
    return updated;
  });
}

/** 'gone' means changed or deleted meanwhile: read it again, so a rename never makes a delete miss (404 only once it is gone). */
export async function deleteKey(id: string | undefined, authorize: Authorize): Promise<void> {
  await whileContended('organization', { reservedTagKeyId: String(id) }, async () => {
    const current = await findForCaller(id, authorize, findReservedTagKey);
    const refused = await deleteStoredReservedTagKey(current);
    if (refused === 'gone') return lostRound();
    countMetric(METRIC.reservedTagKeyDeleted, { reservedTagKeyId: current.id, organization: current.organization });
    return undefined;
  });
}
