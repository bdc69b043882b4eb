import { ApiError } from '../errors/api-error.js';
import { MAX_ID } from './fields.js';
import { ChoiceFilter, IdFilter, queryFieldsOf, readQuery, SearchFilter } from './query-fields.js';

class ProbeQuery {
  @IdFilter({ description: 'An id.' })
  owner?: number;

  @ChoiceFilter(['a', 'b'], { description: 'A letter.' })
  letter?: 'a' | 'b';

  @ChoiceFilter([0, 1, 2], { description: 'A code.' })
  code?: number;

  @SearchFilter({ description: 'A text.' })
  search?: string;
}

function errorsOf(query: Record<string, unknown>): unknown {
  try {
    readQuery(ProbeQuery, query);
  } catch (error) {
    if (error instanceof ApiError) return error.errors;
    throw error;
  }
  throw new Error('expected an ApiError');
}

describe('readQuery', () => {
  it('ignores unknown parameters and reads absent or empty ones as no filter', () => {
    expect({ ...readQuery(ProbeQuery, { other: 'x', owner: '', letter: '', search: '   ' }) }).toEqual({});
  });

  it('reads each filter to its type', () => {
    expect({ ...readQuery(ProbeQuery, { owner: '-7', letter: 'b', code: '01', search: ' 50%_off\\ ' }) }).toEqual({
      owner: -7,
      letter: 'b',
      code: 1,
      search: '%50\\%\\_off\\\\%',
    });
  });

  it('takes the last value of a repeated parameter', () => {
    expect(readQuery(ProbeQuery, { owner: ['x', '3'] }).owner).toBe(3);
    expect(errorsOf({ owner: ['3', 'x'] })).toEqual({ owner: ['A valid integer is required.'] });
  });

  it.each([
    [{ owner: '1.5' }, { owner: ['A valid integer is required.'] }],
    [{ owner: String(MAX_ID + 1) }, { owner: ['A valid integer is required.'] }],
    [{ letter: 'c' }, { letter: ['"c" is not a valid choice; choose one of "a", "b".'] }],
    [{ code: 'x' }, { code: ['A valid integer is required.'] }],
    [{ code: '07' }, { code: ['"7" is not a valid choice; choose one of 0, 1, 2.'] }],
    [{ search: 'x'.repeat(256) }, { search: ['Ensure this field has no more than 255 characters.'] }],
  ])('refuses %p under the parameter name', (query, errors) => {
    expect(errorsOf(query)).toEqual(errors);
  });

  it('reports the first bad filter in declaration order', () => {
    expect(errorsOf({ search: 'x'.repeat(256), letter: 'c', owner: 'x' })).toEqual({ owner: ['A valid integer is required.'] });
  });

  it('documents the filters in declaration order', () => {
    expect(queryFieldsOf(ProbeQuery).map(({ name, schema }) => [name, schema])).toEqual([
      ['owner', { type: 'integer', minimum: 1, maximum: MAX_ID }],
      ['letter', { type: 'string', enum: ['a', 'b'] }],
      ['code', { type: 'integer', enum: [0, 1, 2], minimum: 0, maximum: 2 }],
      ['search', { type: 'string', maxLength: 255 }],
    ]);
  });
});
