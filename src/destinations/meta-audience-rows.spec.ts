import { createHash } from 'node:crypto';
import { metaEnvelopeBytes, type MetaMemberInput, planMetaUpload } from './meta-audience-rows.js';

const sha = (text: string) => createHash('sha256').update(text).digest();
const hex = (text: string) => sha(text).toString('hex');

function person(overrides: Partial<MetaMemberInput<number>> = {}): MetaMemberInput<number> {
  return { key: 1, emails: [sha('ada@example.com')], phones: [], ...overrides };
}

describe('planMetaUpload', () => {
  it('fixes one schema for the whole upload, in key order, with "" for the keys a row lacks', () => {
    const plan = planMetaUpload(
      [
        person({ key: 1, emails: [sha('ada@example.com')], firstName: sha('ada'), lastName: sha('lovelace') }),
        person({ key: 2, emails: [], phones: [sha('447700900123')], mobileAdId: 'AB0C5F6E-1B8D-4C7A-9E2F-3D4B5A6C7D8E' }),
      ],
      60_000,
    );
    expect(plan.schema).toEqual(['EMAIL', 'PHONE', 'FN', 'LN', 'MADID']);
    expect(plan.batches).toEqual([
      {
        keys: [1, 2],
        rows: [
          [hex('ada@example.com'), '', hex('ada'), hex('lovelace'), ''],
          ['', hex('447700900123'), '', '', 'ab0c5f6e-1b8d-4c7a-9e2f-3d4b5a6c7d8e'],
        ],
      },
    ]);
    expect(plan.totalRows).toBe(2);
  });

  it('gives a person one row per email or phone, each with the other keys, and keeps those rows together', () => {
    const plan = planMetaUpload(
      [person({ emails: [sha('a@example.com'), sha('b@example.com')], phones: [sha('15551234567')], country: sha('gb'), zip: sha('n1') })],
      60_000,
    );
    expect(plan.schema).toEqual(['EMAIL', 'PHONE', 'COUNTRY', 'ZIP']);
    expect(plan.batches[0]!.rows).toEqual([
      [hex('a@example.com'), hex('15551234567'), hex('gb'), hex('n1')],
      [hex('b@example.com'), '', hex('gb'), hex('n1')],
    ]);
  });

  it('cuts 25,000 rows into requests of 10,000 when the byte limit allows it', () => {
    const inputs = Array.from({ length: 25_000 }, (_, key) => person({ key, emails: [sha(`p${key}@example.com`)] }));
    const plan = planMetaUpload(inputs, 10_000_000);
    expect(plan.batches.map((batch) => batch.rows.length)).toEqual([10_000, 10_000, 5_000]);
    expect(plan.totalRows).toBe(25_000);
  });

  it('keeps every request body within the byte limit', () => {
    const inputs = Array.from({ length: 2_000 }, (_, key) => person({ key, emails: [sha(`p${key}@example.com`)] }));
    const plan = planMetaUpload(inputs, 60_000);
    expect(plan.batches.length).toBeGreaterThan(2);
    for (const [index, batch] of plan.batches.entries()) {
      const body = JSON.stringify({
        payload: { schema: plan.schema, data: batch.rows },
        session: { session_id: 281_474_976_710_655, batch_seq: index + 1, last_batch_flag: false, estimated_num_total: plan.totalRows },
      });
      expect(Buffer.byteLength(body)).toBeLessThanOrEqual(60_000);
    }
    expect(plan.batches.flatMap((batch) => batch.keys)).toEqual(inputs.map((input) => input.key));
  });

  it('rejects before sending a raw value, a bad mobile ad id, a person with no usable key, and a row too large to send', () => {
    const big = person({ key: 4, externId: 'x'.repeat(255), phones: [sha('1')], firstName: sha('f'), lastName: sha('l') });
    const plan = planMetaUpload(
      [
        person({ key: 1, emails: ['ada@example.com'] }),
        person({ key: 2, mobileAdId: 'not-a-uuid' }),
        person({ key: 3, emails: [], firstName: sha('ada') }),
        big,
        person({ key: 5 }),
      ],
      metaEnvelopeBytes(['EMAIL', 'PHONE', 'FN', 'LN', 'EXTERN_ID']) + 300,
    );
    expect(plan.rejected).toEqual([
      { key: 1, reason: 'invalid_hash' },
      { key: 2, reason: 'invalid_field' },
      { key: 3, reason: 'unmatchable' },
      { key: 4, reason: 'too_large' },
    ]);
    expect(plan.batches.flatMap((batch) => batch.keys)).toEqual([5]);
  });
});
