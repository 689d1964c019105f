import { InvalidAttribute } from './errors';
import { MAX_PAGE_NUMBER, MAX_PAGE_SIZE } from './page-bounds';

export { MAX_PAGE_NUMBER, MAX_PAGE_SIZE };
import type { Range } from '../store/collection';
import type { PaginationLinksValues, PaginationMetaValues } from '../openapi/schemas';

export const DEFAULT_PAGE_SIZE = 20;

export interface PageRequest {
  number: number;
  size: number;
}

type Query = Record<string, string | undefined> | null | undefined;

function parsePageParameter(query: Query, name: 'number' | 'size', fallback: number, max: number): number {
  const raw = query?.[`page[${name}]`];
  if (raw === undefined) return fallback;
  const value = /^\d{1,10}$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
  if (!(value >= 1 && value <= max))
    throw new InvalidAttribute(`page[${name}] must be between 1 and ${max}`, undefined);
  return value;
}

/**
 * `page[number]` and `page[size]` from an already-decoded query string (API Gateway decodes
 * `page%5Bsize%5D` to `page[size]`). `defaultSize` applies only when no page parameter is sent
 * at all, which lets comments list 100 for go-tfe's parameterless `Comments.List`.
 */
export function parsePage(query: Query, defaultSize = DEFAULT_PAGE_SIZE): PageRequest {
  const anyPageParameter = query?.['page[number]'] !== undefined || query?.['page[size]'] !== undefined;
  return {
    number: parsePageParameter(query, 'number', 1, MAX_PAGE_NUMBER),
    size: parsePageParameter(query, 'size', anyPageParameter ? DEFAULT_PAGE_SIZE : defaultSize, MAX_PAGE_SIZE),
  };
}

/** The store's neutral input: which members of a collection this page is (exact: at most 2^31 × 100). */
export const pageRange = (page: PageRequest): Range => ({ offset: (page.number - 1) * page.size, limit: page.size });

/** meta.pagination, as the OpenAPI document's Pagination schema says. */
export type PaginationMeta = PaginationMetaValues;

export function paginationMeta(page: PageRequest, totalCount: number): PaginationMeta {
  const totalPages = Math.max(1, Math.ceil(totalCount / page.size));
  return {
    'current-page': page.number,
    'page-size': page.size,
    'prev-page': page.number > 1 ? page.number - 1 : null,
    'next-page': page.number < totalPages ? page.number + 1 : null,
    'total-pages': totalPages,
    'total-count': totalCount,
  };
}

/** links of a list, as the OpenAPI document's PaginationLinks schema says. */
export type PaginationLinks = PaginationLinksValues;

/** Absolute links to the same collection URL, brackets percent-encoded as HCP Terraform sends them. */
export function paginationLinks(collectionUrl: string, meta: PaginationMeta): PaginationLinks {
  const at = (number: number) => `${collectionUrl}?page%5Bnumber%5D=${number}&page%5Bsize%5D=${meta['page-size']}`;
  return {
    self: at(meta['current-page']),
    first: at(1),
    prev: meta['prev-page'] === null ? null : at(meta['prev-page']),
    next: meta['next-page'] === null ? null : at(meta['next-page']),
    last: at(meta['total-pages']),
  };
}
