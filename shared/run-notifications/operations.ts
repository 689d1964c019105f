import { InvalidAttribute, PayloadTooLarge, Unauthorized } from '../jsonapi/errors';
import { MAX_BODY_BYTES } from '../config';
import { isOrganizationName } from '../organizations';
import { logger } from '../observability/logger';
import { findNotificationSecrets, validSecrets } from '../store/notification-secrets';
import { findRun, insertRun, sameOrganization } from '../store/runs';
import { announcedRunId, parseJson, readNotification } from './payload';
import { signatureMatches } from './signature';

/**
 * One notification from HCP Terraform or Terraform Enterprise for `organization` (the URL's):
 * the signature first (401 before anything about the payload is said), then the payload (400/422),
 * then the run, registered once. The secret and the run are read together, so a notification
 * costs one round trip of reads and, for a run not yet known, one write.
 */
export async function receiveRunNotification(
  organization: string,
  body: Buffer,
  signatures: readonly string[],
): Promise<void> {
  if (body.length > MAX_BODY_BYTES) throw new PayloadTooLarge(MAX_BODY_BYTES);
  // A name outside the rule has no secret, as an unknown organization has none: the same 401, and nothing read.
  if (!isOrganizationName(organization)) throw new Unauthorized();
  let payload: Record<string, unknown> | undefined;
  try {
    payload = parseJson(body);
  } catch {
    // Not JSON: still a 401 unless signed, so an unsigned caller learns nothing; parsed again below.
  }
  const runId = payload && announcedRunId(payload);
  const [secrets, known] = await Promise.all([
    findNotificationSecrets(organization),
    runId ? findRun(runId) : undefined,
  ]);
  if (!signatureMatches(body, signatures, validSecrets(secrets))) throw new Unauthorized();

  const notification = readNotification(payload ?? parseJson(body), organization);
  if (notification.kind !== 'run') {
    logger.info('run notification accepted', {
      trigger: notification.kind === 'other' ? notification.trigger : 'verification',
      organization,
    });
    return;
  }
  const registration = known ? sameOrganization(known, notification.run) : await insertRun(notification.run);
  if (registration === 'registered-elsewhere') {
    logger.warn('run notification refused: run registered in another organization', {
      organization,
      runId: notification.run.runId,
    });
    throw new InvalidAttribute('run_id is registered in another organization', '/run_id');
  }
  logger.info('run notification accepted', {
    trigger: notification.trigger,
    organization,
    runId: registration.run.runId,
    registered: registration.created,
  });
}
