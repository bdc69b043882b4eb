import { ChangeMembersDto } from '../../memberships/dto/members.dto.js';
import { BatchPeopleDto } from '../../people/dto/person.dto.js';
import { ApiError } from '../errors/api-error.js';
import { createValidationPipe } from './validation-pipe.js';

const pipe = createValidationPipe();
const body = (metatype: new () => object) => ({ type: 'body' as const, metatype, data: undefined });

async function errorsOf(value: unknown, metatype: new () => object): Promise<unknown> {
  try {
    await pipe.transform(value, body(metatype));
  } catch (error) {
    if (error instanceof ApiError) return error.errors;
    throw error;
  }
  return undefined;
}

describe('the validation pipe on a body of raw rows (BulkRows)', () => {
  it('hands the rows on as they came: the same list, the same objects', async () => {
    const rows = [{ external_id: 'a', identifiers: { email: 'ada@example.com' } }, 'not even an object'];
    const checked = (await pipe.transform({ people: rows }, body(BatchPeopleDto))) as BatchPeopleDto;
    expect(checked).toBeInstanceOf(BatchPeopleDto);
    expect(checked.people).toBe(rows);
    expect(checked.people[0]).toBe(rows[0]);
  });

  it('still checks the list and the other fields as the DTO says', async () => {
    const tooMany = Array.from({ length: 1001 }, () => ({}));
    expect(await errorsOf({ people: tooMany }, BatchPeopleDto)).toEqual({ people: ['Ensure this list has no more than 1000 items.'] });
    expect(await errorsOf({ people: { external_id: 'x' } }, BatchPeopleDto)).toEqual({ people: [expect.any(String)] });
    expect(await errorsOf({ people: [], extra: 1 }, BatchPeopleDto)).toEqual({ extra: ['Unknown field.'] });
    expect(await errorsOf({ action: 'merge', people: [{}] }, ChangeMembersDto)).toEqual({ action: [expect.any(String)] });
    const checked = (await pipe.transform({ action: 'add', people: [{ external_id: 'a' }] }, body(ChangeMembersDto))) as ChangeMembersDto;
    expect(checked.action).toBe('add');
    expect(checked.people).toEqual([{ external_id: 'a' }]);
  });
});
