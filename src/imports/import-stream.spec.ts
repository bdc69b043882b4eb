import { parse } from 'csv-parse';
import type { Parser } from 'csv-parse';
import { type CsvRecord, parseCsvRecords } from './import-stream.js';

function collect<T>(parser: Parser, text: string): Promise<T[]> {
  return new Promise((resolve, reject) => {
    const out: T[] = [];
    parser.on('data', (record: T) => out.push(record));
    parser.on('error', reject);
    parser.on('end', () => resolve(out));
    parser.end(text);
  });
}

describe('parseCsvRecords', () => {
  it("numbers each record with the line csv-parse's info option gives it, across quoted line breaks, blank lines and CRLF", async () => {
    const text = 'a,b\n1,2\n"x\ny",3\n\n4,5\r\n"q""\n\nz",6\n7,8';
    const withInfo = await collect<{ record: string[]; info: { lines: number } }>(
      parse({ relax_column_count: true, info: true, skip_empty_lines: true, bom: true }),
      text,
    );
    const ours = await collect<CsvRecord>(parseCsvRecords(), text);
    expect(ours).toEqual(withInfo.map(({ record, info }) => ({ record, line: info.lines })));
    expect(ours).toHaveLength(6);
  });
});
