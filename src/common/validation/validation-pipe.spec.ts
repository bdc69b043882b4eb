import { ApiError } from '../errors/api-error.js';
import { BulkRowsField } from './bulk-rows.js';
import { ChoiceField } from './fields.js';
import { createValidationPipe } from './validation-pipe.js';

class ProbeRowsDto {
  @BulkRowsField('probeRows', 3)
  rows: unknown[];
}

class ProbeActionDto {
  @ChoiceField(['add', 'remove'])
  action: 'add' | 'remove';

  @BulkRowsField('probeRows', 3)
  rows: unknown[];
}

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

describe('the validation pipe on a body of raw rows (BulkRowsField)', () => {
  it('hands the rows on as they came: the same list, the same objects', async () => {
    const rows = [{ external_id: 'a', identifiers: { email: 'ada@example.com' } }, 'not even an object'];
    const checked = (await pipe.transform({ rows }, body(ProbeRowsDto))) as ProbeRowsDto;
    expect(checked).toBeInstanceOf(ProbeRowsDto);
    expect(checked.rows).toBe(rows);
    expect(checked.rows[0]).toBe(rows[0]);
  });

  it('still checks the list and the other fields as the DTO says', async () => {
    expect(await errorsOf({ rows: [{}, {}, {}, {}] }, ProbeRowsDto)).toEqual({ rows: ['Ensure this list has no more than 3 items.'] });
    expect(await errorsOf({ rows: { external_id: 'x' } }, ProbeRowsDto)).toEqual({ rows: [expect.any(String)] });
    expect(await errorsOf({}, ProbeRowsDto)).toEqual({ rows: ['This field is required.'] });
    expect(await errorsOf({ rows: [], extra: 1 }, ProbeRowsDto)).toEqual({ extra: ['Unknown field.'] });
    expect(await errorsOf({ action: 'merge', rows: [{}] }, ProbeActionDto)).toEqual({ action: [expect.any(String)] });
    const checked = (await pipe.transform({ action: 'add', rows: [{ external_id: 'a' }] }, body(ProbeActionDto))) as ProbeActionDto;
    expect(checked.action).toBe('add');
    expect(checked.rows).toEqual([{ external_id: 'a' }]);
  });
});
