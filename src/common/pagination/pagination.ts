import type { ObjectLiteral } from 'typeorm';
import { ApiError } from '../errors/api-error.js';

/** SPEC section 4. */
export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

export interface Ordering {
  field: string;
  direction: 'ASC' | 'DESC';
}

export interface PageRequest {
  page: number;
  pageSize: number;
  ordering: Ordering;
}

export interface Page<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

export interface PageRequestOptions {
  /** Fields a client may order by; anything else is a 400. */
  orderingFields: readonly string[];
  /** `field` or `-field`; SPEC default is `-id` (newest first). */
  defaultOrdering?: string;
}

const INVALID_PAGE = () => new ApiError(404, 'not_found', 'Invalid page.');

/**
 * Reads `page`, `page_size` and `ordering` from a query string object.
 * `page` that is not a positive integer → 404 "Invalid page." (as DRF does);
 * `page_size` that is not a positive integer → 400, above 100 → clamped to 100;
 * an ordering outside the whitelist → 400 under `ordering`.
 */
export function parsePageRequest(query: Record<string, unknown>, options: PageRequestOptions): PageRequest {
  const page = single(query.page);
  const pageNumber = page === undefined ? 1 : positiveInteger(page);
  if (pageNumber === undefined) throw INVALID_PAGE();

  const size = single(query.page_size);
  let pageSize = DEFAULT_PAGE_SIZE;
  if (size !== undefined) {
    const parsed = positiveInteger(size);
    if (parsed === undefined) throw ApiError.field('page_size', 'A positive integer is required.');
    pageSize = Math.min(parsed, MAX_PAGE_SIZE);
  }

  const orderingText = single(query.ordering) ?? options.defaultOrdering ?? '-id';
  const descending = orderingText.startsWith('-');
  const field = descending ? orderingText.slice(1) : orderingText;
  if (!options.orderingFields.includes(field)) {
    throw ApiError.field(
      'ordering',
      `Cannot order by "${field.slice(0, 64)}"; choose one of ${options.orderingFields.join(', ')}, optionally prefixed with "-".`,
    );
  }
  return { page: pageNumber, pageSize, ordering: { field, direction: descending ? 'DESC' : 'ASC' } };
}

/** Rows to skip for a page request. */
export function offsetOf(request: PageRequest): number {
  return (request.page - 1) * request.pageSize;
}

/** A repository's list result as the API's page of `map`ped items. */
export function pageOf<R, T>(result: { rows: R[]; count: number }, request: PageRequest, url: URL, map: (row: R) => T): Page<T> {
  return buildPage(request, result.count, result.rows.map(map), url);
}

/**
 * Builds the list envelope. `requestUrl` is the absolute URL the client called (on the public
 * base URL behind a proxy); next/previous keep every other query parameter it carried.
 * A page past the end is a 404, but page 1 of an empty list is a valid, empty page.
 */
export function buildPage<T>(request: PageRequest, count: number, results: T[], requestUrl: URL): Page<T> {
  if (request.page > 1 && offsetOf(request) >= count) throw INVALID_PAGE();
  const linkTo = (page: number) => {
    const url = new URL(requestUrl);
    url.searchParams.set('page', String(page));
    return url.toString();
  };
  return {
    count,
    next: request.page * request.pageSize < count ? linkTo(request.page + 1) : null,
    previous: request.page > 1 ? linkTo(request.page - 1) : null,
    results,
  };
}

function single(value: unknown): string | undefined {
  // `?page=1&page=2` arrives as an array: the last one wins, as in most frameworks.
  const last = Array.isArray(value) ? value[value.length - 1] : value;
  return typeof last === 'string' ? last : undefined;
}

function positiveInteger(text: string): number | undefined {
  if (!/^\d{1,9}$/.test(text)) return undefined;
  const value = Number(text);
  return value >= 1 ? value : undefined;
}

/** API ordering fields mapped to entity property names. */
export type OrderingColumns<E = ObjectLiteral> = Record<string, keyof E & string>;

/** SPEC section 4: `ordering` over id, name, created_at, updated_at, status. */
export const ORDERING_FIELDS = ['id', 'name', 'created_at', 'updated_at', 'status'] as const;
export const DEFAULT_ORDERING_COLUMNS = {
  id: 'id',
  name: 'name',
  created_at: 'createdAt',
  updated_at: 'updatedAt',
  status: 'status',
} as const;
