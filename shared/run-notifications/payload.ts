import { BadRequest, InvalidAttribute } from '../jsonapi/errors';
import { decodeUtf8 } from '../http/request-body';
import { isId } from '../ids';
import { isWorkspaceName, type NewRun } from '../store/runs';

/**
 * HCP Terraform's and Terraform Enterprise's generic webhook payload, version 1 ("Notification
 * Configurations API", Notification Payload): one JSON object with the run's fields at the top
 * (all null in a `verification`) and `notifications[]`, each with its `trigger`. Triggers are
 * `verification`, `run:*` (created, planning, needs_attention, applying, completed, errored),
 * and non-run ones (`assessment:*`, `workspace:*`, `change_request:*`), which register nothing.
 */
export type Notification =
  | { kind: 'verification' }
  | { kind: 'run'; trigger: string; run: NewRun }
  | { kind: 'other'; trigger: string };

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The JSON of a body, or a 400; read before the signature is checked only to know which run to look up. */
export function parseJson(body: Buffer): Record<string, unknown> {
  const text = decodeUtf8(body);
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    throw new BadRequest('request body is not valid JSON');
  }
  if (!isObject(document)) throw new BadRequest('request body must be a JSON object');
  return document;
}

/** The run id a payload names, if it has the shape of one (to read the run together with the secret). */
export const announcedRunId = (payload: Record<string, unknown>): string | undefined =>
  typeof payload.run_id === 'string' && isId('run', payload.run_id) ? payload.run_id : undefined;

/** A signed payload, checked field by field: 422 with a pointer for anything HCP Terraform would not send. */
export function readNotification(payload: Record<string, unknown>, organization: string): Notification {
  if (payload.payload_version !== 1) throw new InvalidAttribute('payload_version must be 1', '/payload_version');
  const notifications = payload.notifications;
  if (
    !Array.isArray(notifications) ||
    notifications.length === 0 ||
    !notifications.every((n) => isObject(n) && typeof n.trigger === 'string')
  ) {
    throw new InvalidAttribute('notifications must be a non-empty array of objects with a trigger', '/notifications');
  }
  // The verification names no organization; every other payload must name the URL's.
  if (payload.organization_name !== null && payload.organization_name !== organization) {
    throw new InvalidAttribute('organization_name does not match the organization in the URL', '/organization_name');
  }
  const triggers = notifications.map((n) => n.trigger as string);
  const runTrigger = triggers.find((t) => t.startsWith('run:'));
  if (runTrigger === undefined) {
    return triggers.includes('verification') ? { kind: 'verification' } : { kind: 'other', trigger: triggers[0]! };
  }
  if (payload.organization_name !== organization) {
    throw new InvalidAttribute('organization_name does not match the organization in the URL', '/organization_name');
  }
  return { kind: 'run', trigger: runTrigger, run: runOf(payload, organization) };
}

function runOf(payload: Record<string, unknown>, organization: string): NewRun {
  const {
    run_id: runId,
    workspace_name: workspace,
    workspace_id: workspaceId,
    run_created_at: createdAt,
    run_created_by: createdBy,
  } = payload;
  if (!isId('run', runId as string | undefined))
    throw new InvalidAttribute('run_id must be run- followed by 16 letters or digits', '/run_id');
  if (workspace !== null && workspace !== undefined && !(typeof workspace === 'string' && isWorkspaceName(workspace))) {
    throw new InvalidAttribute('workspace_name must be 1-90 letters, digits, - or _', '/workspace_name');
  }
  if (
    workspaceId !== null &&
    workspaceId !== undefined &&
    !(typeof workspaceId === 'string' && /^ws-[A-Za-z0-9]{1,64}$/.test(workspaceId))
  ) {
    throw new InvalidAttribute('workspace_id must be ws- followed by letters or digits', '/workspace_id');
  }
  const created = typeof createdAt === 'string' ? new Date(createdAt) : undefined;
  if (createdAt !== null && createdAt !== undefined && (created === undefined || Number.isNaN(created.getTime()))) {
    throw new InvalidAttribute('run_created_at must be an ISO 8601 timestamp', '/run_created_at');
  }
  if (
    createdBy !== null &&
    createdBy !== undefined &&
    !(typeof createdBy === 'string' && createdBy.length > 0 && createdBy.length <= 255)
  ) {
    throw new InvalidAttribute('run_created_by must be a user name', '/run_created_by');
  }
  return {
    runId: runId as string,
    organization,
    ...(typeof workspace === 'string' ? { workspace } : {}),
    ...(typeof workspaceId === 'string' ? { workspaceId } : {}),
    // The API's one timestamp format, whatever precision HCP Terraform sent.
    ...(created ? { createdAt: created.toISOString() } : {}),
    ...(typeof createdBy === 'string' ? { createdBy } : {}),
  };
}
