import { ApiError } from '../errors/api-error.js';
import { buildPage, MAX_PAGE_SIZE, offsetOf, parsePageRequest } from './pagination.js';

const options = { orderingFields: ['id', 'name', 'created_at', 'updated_at', 'status'] };

function errorOf(action: () => unknown): ApiError {
  try {
    action();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected an ApiError');
}

describe('parsePageRequest', () => {
  it('defaults to page 1, 20 per page, newest first', () => {
    expect(parsePageRequest({}, options)).toEqual({ page: 1, pageSize: 20, ordering: { field: 'id', direction: 'DESC' } });
  });

  it.each(['0', 'abc', '-1', '1.5', '', '9999999999'])('answers page=%p with 404 "Invalid page."', (page) => {
    const error = errorOf(() => parsePageRequest({ page }, options));
    expect(error.statusCode).toBe(404);
    expect(error.code).toBe('not_found');
    expect(error.detail).toBe('Invalid page.');
  });

  it('clamps page_size above the maximum', () => {
    expect(parsePageRequest({ page_size: '101' }, options).pageSize).toBe(MAX_PAGE_SIZE);
    expect(parsePageRequest({ page_size: '100' }, options).pageSize).toBe(100);
    expect(parsePageRequest({ page_size: '1' }, options).pageSize).toBe(1);
  });

  it.each(['0', 'abc', '-5'])('rejects page_size=%p with a validation error', (pageSize) => {
    const error = errorOf(() => parsePageRequest({ page_size: pageSize }, options));
    expect(error.statusCode).toBe(400);
    expect(error.errors).toEqual({ page_size: ['A positive integer is required.'] });
  });

  it('reads ordering in both directions over the whitelist', () => {
    for (const field of options.orderingFields) {
      expect(parsePageRequest({ ordering: field }, options).ordering).toEqual({ field, direction: 'ASC' });
      expect(parsePageRequest({ ordering: `-${field}` }, options).ordering).toEqual({ field, direction: 'DESC' });
    }
  });

  it('rejects an ordering outside the whitelist under "ordering"', () => {
    const error = errorOf(() => parsePageRequest({ ordering: 'password_hash' }, options));
    expect(error.statusCode).toBe(400);
    expect(Object.keys(error.errors ?? {})).toEqual(['ordering']);
  });

  it('takes the last value of a repeated parameter', () => {
    expect(parsePageRequest({ page: ['1', '3'] }, options).page).toBe(3);
  });
});

describe('buildPage', () => {
  const url = new URL('http://host/api/v1/signals/?status=1&page=2&search=a%20b');

  it('links next and previous with every other query parameter kept', () => {
    const page = buildPage({ page: 2, pageSize: 20, ordering: { field: 'id', direction: 'DESC' } }, 57, [1, 2], url);
    expect(page.count).toBe(57);
    expect(new URL(page.next!).searchParams.get('page')).toBe('3');
    expect(new URL(page.previous!).searchParams.get('page')).toBe('1');
    for (const link of [page.next!, page.previous!]) {
      const params = new URL(link).searchParams;
      expect(params.get('status')).toBe('1');
      expect(params.get('search')).toBe('a b');
      expect(link.startsWith('http://host/api/v1/signals/?')).toBe(true);
    }
  });

  it('has no next on the last page and no previous on the first', () => {
    const last = buildPage({ page: 3, pageSize: 20, ordering: { field: 'id', direction: 'DESC' } }, 57, [], url);
    expect(last.next).toBeNull();
    const first = buildPage({ page: 1, pageSize: 20, ordering: { field: 'id', direction: 'DESC' } }, 57, [], url);
    expect(first.previous).toBeNull();
    expect(first.next).not.toBeNull();
  });

  it('accepts page 1 of an empty list', () => {
    expect(buildPage({ page: 1, pageSize: 20, ordering: { field: 'id', direction: 'DESC' } }, 0, [], url)).toEqual({
      count: 0,
      next: null,
      previous: null,
      results: [],
    });
  });

  it('answers a page past the end with 404 "Invalid page."', () => {
    const error = errorOf(() => buildPage({ page: 4, pageSize: 20, ordering: { field: 'id', direction: 'DESC' } }, 57, [], url));
    expect(error.statusCode).toBe(404);
    expect(error.detail).toBe('Invalid page.');
    expect(() => buildPage({ page: 2, pageSize: 20, ordering: { field: 'id', direction: 'DESC' } }, 0, [], url)).toThrow(ApiError);
  });

  it('computes the offset of a page', () => {
    expect(offsetOf({ page: 3, pageSize: 25, ordering: { field: 'id', direction: 'DESC' } })).toBe(50);
  });
});
