import { Transform, type TransformCallback } from 'node:stream';
import { parse as parseCsv, type Parser } from 'csv-parse';
import secureJsonParse from 'secure-json-parse';
import {
  type CsvLayout,
  csvRecordToPerson,
  ImportFileError,
  isRejected,
  ndjsonLineToPerson,
  readCsvHeader,
  readImportRow,
  type RejectedRow,
  type StagedRow,
} from './import-row-reader.js';

/**
 * The upload's path from socket to COPY (SPEC 10.1, Imports), as stream stages joined by
 * `pipeline`, so backpressure runs end to end: when PostgreSQL is behind, the COPY stream stops
 * reading, every stage's buffer fills and the request socket is paused. No stage holds more than
 * a chunk or a batch of rows.
 */

export type ImportFormat = 'csv' | 'ndjson';

/** The longest record (a CSV row or an NDJSON line) read, in characters; longer refuses the file. */
export const MAX_RECORD_CHARS = 256 * 1024;
/**
 * Rows read between two yields to the event loop, and the batch handed to the COPY. 64 rows take
 * about a millisecond. The batch size is what bounds the upload's memory: at 256 rows a 1M-row
 * upload grew the service's RSS by 133 to 202 MB (four runs), at 128 by 12 and at 64 by 10 and 15
 * (bench/imports.ts, 2026-11-28), staging 5 % faster, with less garbage collection.
 */
export const ROWS_PER_BATCH = 64;
const MAX_ERRORS_SAMPLE = 100;

/** Thrown when the body passes IMPORT_MAX_BYTES: a 413. */
export class ImportTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`The file is larger than ${limit} bytes.`);
  }
}

/** The upload's counts, kept while it streams (SPEC 10.1: counts by reason and ≤ 100 samples). */
export class ImportTally {
  rowsTotal = 0;
  rowsAccepted = 0;
  rowsRejected = 0;
  readonly rejectedByReason: Record<string, number> = {};
  readonly errorsSample: RejectedRow[] = [];

  reject(row: RejectedRow): void {
    this.rowsRejected++;
    for (const codes of Object.values(row.errors))
      for (const code of new Set(codes)) this.rejectedByReason[code] = (this.rejectedByReason[code] ?? 0) + 1;
    if (this.errorsSample.length < MAX_ERRORS_SAMPLE) this.errorsSample.push(row);
  }
}

/**
 * Counts bytes against the limit and decodes UTF-8 strictly: a NUL byte or a byte sequence that is
 * not UTF-8 means the file is neither CSV nor NDJSON (a binary file), and the import fails.
 */
export function decodeText(maxBytes: number): Transform {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let bytes = 0;
  const notText = () => new ImportFileError('not_csv_or_ndjson', 1, 'The file is not UTF-8 text (a binary file?); send CSV or NDJSON.');
  return new Transform({
    readableObjectMode: true,
    // Two decoded chunks ahead of the parser at most (see readRows).
    readableHighWaterMark: 2,
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      bytes += chunk.length;
      if (bytes > maxBytes) return callback(new ImportTooLargeError(maxBytes));
      if (chunk.includes(0)) return callback(notText());
      let text: string;
      try {
        text = decoder.decode(chunk, { stream: true });
      } catch {
        return callback(notText());
      }
      callback(null, text.length > 0 ? text : undefined);
    },
    flush(callback: TransformCallback) {
      try {
        const rest = decoder.decode();
        callback(null, rest.length > 0 ? rest : undefined);
      } catch {
        callback(notText());
      }
    },
  });
}

/** Splits text into numbered lines; a line longer than MAX_RECORD_CHARS refuses the file. */
export function splitLines(): Transform {
  let rest = '';
  let line = 0;
  const tooLong = (at: number) => new ImportFileError('record_too_large', at, `Line ${at} is longer than ${MAX_RECORD_CHARS} characters.`);
  return new Transform({
    objectMode: true,
    transform(chunk: string, _encoding, callback: TransformCallback) {
      const text = rest + chunk;
      let start = 0;
      for (let end = text.indexOf('\n', start); end !== -1; end = text.indexOf('\n', start)) {
        line++;
        if (end - start > MAX_RECORD_CHARS) return callback(tooLong(line));
        this.push({ line, text: text.slice(start, end) });
        start = end + 1;
      }
      rest = text.slice(start);
      if (rest.length > MAX_RECORD_CHARS) return callback(tooLong(line + 1));
      callback();
    },
    flush(callback: TransformCallback) {
      if (rest.length > 0) this.push({ line: ++line, text: rest });
      callback();
    },
  });
}

/** A CSV record and the file line it starts on (SPEC 10.1: the header is line 1). */
export interface CsvRecord {
  record: string[];
  line: number;
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * csv-parse, bounded: one record at most MAX_RECORD_CHARS; rows of the wrong width are rejected
 * rows, not a broken file. Each record comes out as a CsvRecord with the file line it starts on,
 * where CRLF, LF and a lone CR each end a line, inside quotes or not.
 *
 * csv-parse's running `info.lines` (csv.js.org/parse/info) is not that line. It counts every CR
 * and every LF it reads one by one, except the second character of a CRLF record delimiter, so a
 * CRLF inside quotes counts as two lines and moves every later record down by one (csv-parse
 * 7.0.3, `lib/api/index.js`, `wasRowDelimiter`; no option changes it). As a record is pushed, it
 * is also the line the record ends on, not the one it starts on. What it does give exactly, with
 * `info.empty_lines`, is whether any CR or LF was read inside the record: its count grows by one
 * for the last record's delimiter, one for each empty line skipped, and one for each CR or LF
 * inside the record. Only a record with a line break in it is scanned, so an ordinary record costs
 * two subtractions. Reading `info` as the record is pushed rather than with the `info: true`
 * option spares a copy of all its counts for every record: 2 % of a 300,000-row upload's time
 * (`--cpu-prof`).
 */
export function parseCsvRecords(): Parser {
  const parser = parseCsv({ relax_column_count: true, max_record_size: MAX_RECORD_CHARS, skip_empty_lines: true, bom: true });
  const push = parser.push.bind(parser);
  // The file line the next record or empty line starts on, and csv-parse's counts at the last record
  // (its line count starts at 1, as if a delimiter came before the first record).
  let nextLine = 1;
  let parsedLines = 0;
  let emptyLines = 0;
  parser.push = (record: string[] | null) => {
    if (record === null) return push(null);
    const { lines, empty_lines } = parser.info;
    const skipped = empty_lines - emptyLines;
    const line = nextLine + skipped;
    const readBreaks = lines - parsedLines - 1 - skipped > 0;
    nextLine = line + 1 + (readBreaks ? lineBreaksIn(record, parser.options.record_delimiter) : 0);
    parsedLines = lines;
    emptyLines = empty_lines;
    return push({ record, line } satisfies CsvRecord);
  };
  return parser;
}

/**
 * The line breaks inside a record: a CRLF, an LF or a lone CR each end one line. A CR closing the
 * record before an LF record delimiter, or an LF opening it after a CR record delimiter, is the
 * other half of a CRLF whose break its delimiter already counts.
 */
function lineBreaksIn(record: string[], recordDelimiter: Buffer[]): number {
  let breaks = 0;
  for (const field of record)
    for (let at = 0; at < field.length; at++) {
      const code = field.charCodeAt(at);
      if (code === LF || (code === CR && field.charCodeAt(at + 1) !== LF)) breaks++;
    }
  const delimiter = recordDelimiter.length === 1 && recordDelimiter[0].length === 1 ? recordDelimiter[0][0] : undefined;
  if (delimiter === LF && record.at(-1)?.endsWith('\r')) breaks--;
  if (delimiter === CR && record[0]?.startsWith('\n')) breaks--;
  return breaks;
}

/** csv-parse's errors that say the file is not CSV, as the import's reason. */
export function csvFileError(error: unknown): ImportFileError | undefined {
  const code = (error as { code?: string }).code;
  if (typeof code !== 'string' || !code.startsWith('CSV_')) return undefined;
  const line = (error as { lines?: number }).lines ?? 1;
  if (code === 'CSV_MAX_RECORD_SIZE')
    return new ImportFileError('record_too_large', line, `A record near line ${line} is longer than ${MAX_RECORD_CHARS} characters.`);
  return new ImportFileError('malformed_csv', line, `The file is not valid CSV near line ${line} (${code}).`);
}

/**
 * Reads each record as it arrives and passes on batches of staged rows; rejected rows go to the
 * tally. It yields to the event loop after every batch (setImmediate), so a fast upload never
 * stalls other requests for more than one batch's hashing.
 */
export function readRows(format: ImportFormat, tally: ImportTally): Transform {
  let layout: CsvLayout | undefined;
  let batch: StagedRow[] = [];
  let sinceYield = 0;
  const take = (line: number, person: unknown) => {
    tally.rowsTotal++;
    const row = readImportRow(line, person);
    if (isRejected(row)) tally.reject(row);
    else {
      tally.rowsAccepted++;
      batch.push(row);
    }
  };
  return new Transform({
    objectMode: true,
    // One batch in flight: the stages before stop reading, and the socket pauses. Rows that wait
    // longer than two young-generation collections (~30 ms at full speed) are promoted to the old
    // generation, which only a full collection empties: four batches in flight grew the heap by
    // 120-200 MB an import, one batch by 90 (bench/imports.ts, 300,000 rows).
    writableHighWaterMark: ROWS_PER_BATCH,
    readableHighWaterMark: 1,
    transform(chunk: unknown, _encoding, callback: TransformCallback) {
      try {
        if (format === 'csv') {
          const { record, line } = chunk as CsvRecord;
          if (layout === undefined) layout = readCsvHeader(record);
          else {
            const read = csvRecordToPerson(layout, record);
            if (read.errors !== undefined) {
              tally.rowsTotal++;
              tally.reject({ line, errors: read.errors });
            } else take(line, read.person);
          }
        } else {
          const { line, text } = chunk as { line: number; text: string };
          if (text.trim() !== '') {
            let value: unknown;
            try {
              value = secureJsonParse.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
            } catch {
              if (tally.rowsTotal === 0)
                throw new ImportFileError('not_csv_or_ndjson', line, 'The first line is not a JSON object; send CSV or NDJSON.');
              tally.rowsTotal++;
              tally.reject({ line, errors: { non_field_errors: ['invalid_json'] } });
              value = undefined;
            }
            if (value !== undefined) {
              const read = ndjsonLineToPerson(value);
              if (read.errors !== undefined) {
                tally.rowsTotal++;
                tally.reject({ line, errors: read.errors });
              } else take(line, read.person);
            }
          }
        }
      } catch (error) {
        return callback(error as Error);
      }
      if (++sinceYield < ROWS_PER_BATCH) return callback();
      sinceYield = 0;
      const full = batch;
      batch = [];
      if (full.length > 0) this.push(full);
      setImmediate(callback);
    },
    flush(callback: TransformCallback) {
      if (format === 'csv' && layout === undefined)
        return callback(new ImportFileError('no_usable_column', 1, 'The file has no header row.'));
      if (batch.length > 0) this.push(batch);
      callback();
    },
  });
}
