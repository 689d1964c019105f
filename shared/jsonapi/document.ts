import { API_BASE_PATH } from '../config';
import { paginationLinks, paginationMeta, type PageRequest } from './pagination';

export interface ResourceIdentifier {
  id: string;
  type: string;
}

export interface Resource<Attributes = Record<string, unknown>> extends ResourceIdentifier {
  attributes: Attributes;
  relationships?: Record<string, { data: ResourceIdentifier | null }>;
  links: { self: string };
}

/** A to-one relationship as the contract spells it. */
export const relationship = <Type extends string>(type: Type, id: string) => ({ data: { id, type } });

/** `links.self` of a resource: relative to the host, as HCP Terraform writes it. */
export const selfLink = (path: string) => `${API_BASE_PATH}${path}`;

export interface Page<T> {
  items: T[];
  totalCount: number;
}

/** A list document with the contract's meta.pagination and absolute links. */
export function listDocument<T>(
  page: Page<T>,
  request: PageRequest,
  collectionUrl: string,
  serialize: (item: T) => Resource,
) {
  const meta = paginationMeta(request, page.totalCount);
  return {
    data: page.items.map(serialize),
    links: paginationLinks(collectionUrl, meta),
    meta: { pagination: meta },
  };
}
