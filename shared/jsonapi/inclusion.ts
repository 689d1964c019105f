import { BadRequest } from './errors';

type Query = Record<string, string | undefined> | null | undefined;
type MultiQuery = Record<string, string[] | undefined> | null | undefined;

/** HCP Terraform's words: go-tfe turns a 400 whose text contains "include parameter" into ErrInvalidIncludeValue. */
const INVALID_INCLUDE = 'Invalid include parameter';

/**
 * No endpoint includes related resources, so any `include` is refused: "If a server is unable to
 * identify a relationship path or does not support inclusion of resources from a path, it MUST
 * respond with 400 Bad Request" (JSON:API 1.1, Inclusion of Related Resources).
 */
export function assertNoInclusion(query: Query, multiQuery: MultiQuery): void {
  const values =
    (multiQuery && Object.hasOwn(multiQuery, 'include') ? multiQuery.include : undefined) ??
    (query && Object.hasOwn(query, 'include') && query.include !== undefined ? [query.include] : undefined);
  if (values === undefined) return;
  const paths = values
    .flatMap((value) => value.split(','))
    .map((path) => path.trim())
    .filter(Boolean);
  if (paths.length === 0)
    throw new BadRequest(
      `${INVALID_INCLUDE}: it names no relationship path, and this endpoint includes no related resources`,
    );
  throw new BadRequest(
    `${INVALID_INCLUDE}: ${paths.join(', ')} cannot be included, this endpoint includes no related resources`,
  );
}
