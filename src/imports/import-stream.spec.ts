import type { Parser } from 'csv-parse';
import { type CsvRecord, parseCsvRecords } from './import-stream.js';

/** Parses text written in chunks of `chunkSize` characters (all at once by default). */
function collect(parser: Parser, text: string, chunkSize = text.length): Promise<CsvRecord[]> {
  return new Promise((resolve, reject) => {
    const out: CsvRecord[] = [];
    parser.on('data', (record: CsvRecord) => out.push(record));
    parser.on('error', reject);
    parser.on('end', () => resolve(out));
    for (let at = 0; at < text.length; at += chunkSize) parser.write(text.slice(at, at + chunkSize));
    parser.end();
  });
}

const linesOf = async (text: string, chunkSize?: number) => (await collect(parseCsvRecords(), text, chunkSize)).map(({ line }) => line);

describe('parseCsvRecords', () => {
  it('numbers each record with the file line it starts on, across quoted line breaks, blank lines and a CRLF in an LF file', async () => {
    const text = 'a,b\n1,2\n"x\ny",3\n\n4,5\r\n"q""\n\nz",6\n7,8';
    const records = await collect(parseCsvRecords(), text);
    expect(records.map(({ record }) => record)).toEqual([
      ['a', 'b'],
      ['1', '2'],
      ['x\ny', '3'],
      ['4', '5\r'],
      ['q"\n\nz', '6'],
      ['7', '8'],
    ]);
    expect(records.map(({ line }) => line)).toEqual([1, 2, 3, 6, 7, 10]);
  });

  it('counts a quoted CRLF in a CRLF file as one line break', async () => {
    expect(await linesOf('external_id,email,note\r\nq-1,ok@example.com,"two\r\nlines"\r\nq-2,bad,x\r\n')).toEqual([1, 2, 4]);
  });

  it('counts several quoted CRLFs, in one field and across fields and records, one line each', async () => {
    const text = 'id,note,other\r\n1,"a\r\nb\r\nc","d\r\ne"\r\n2,x,y\r\n\r\n3,"\r\n\r\n",z\r\n4,"f\r\ng",h\r\n5,i,j';
    expect(await linesOf(text)).toEqual([1, 2, 6, 8, 11, 13]);
  });

  it('counts quoted LF, CR and CRLF breaks one line each in LF, CRLF and CR-only files', async () => {
    const note = '"l\nc\rcr\r\nend"';
    expect(await linesOf(`id,note\n1,${note}\n2,x\n`)).toEqual([1, 2, 6]);
    expect(await linesOf(`id,note\r\n1,${note}\r\n2,x\r\n`)).toEqual([1, 2, 6]);
    expect(await linesOf(`id,note\r1,${note}\r2,x\r`)).toEqual([1, 2, 6]);
  });

  it('gives the same lines whatever the chunks a CRLF file arrives in', async () => {
    const text = 'id,note\r\n1,"a\r\nb"\r\n\r\n2,"\r\n"\r\n3,x\r\n';
    expect(await linesOf(text)).toEqual([1, 2, 5, 7]);
    for (const chunkSize of [1, 2, 3, 5]) expect(await linesOf(text, chunkSize)).toEqual([1, 2, 5, 7]);
  });
});
