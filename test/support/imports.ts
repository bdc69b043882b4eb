import { Readable } from 'node:stream';
import type { TestApp } from './test-app.js';

export interface ImportBody {
  id: number;
  customer: number;
  status: string;
  rows_total: number;
  rows_accepted: number;
  rows_rejected: number;
  rejected_by_reason: Record<string, number>;
  errors_sample: { line: number; errors: Record<string, string[]> }[];
  started_at: string | null;
  finished_at: string | null;
  updated_at: string;
}

/** POSTs a file to the imports route; a stream or async iterable body is sent chunked, as a real upload would be. */
export function postImport(
  api: TestApp,
  auth: Record<string, string>,
  body: string | Buffer | AsyncIterable<string | Buffer>,
  contentType = 'text/csv',
  query = 'target=people',
): Promise<Response> {
  const streamed = typeof body !== 'string' && !Buffer.isBuffer(body);
  return api.request(`/api/v1/imports/?${query}`, {
    method: 'POST',
    headers: { ...auth, 'content-type': contentType },
    body: streamed ? (Readable.toWeb(Readable.from(body)) as ReadableStream) : body,
    ...(streamed ? { duplex: 'half' } : {}),
  } as RequestInit);
}

/** Polls the import until its merge job has finished. */
export async function finishedImport(api: TestApp, auth: Record<string, string>, id: number, timeoutMs = 120_000): Promise<ImportBody> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await api.request(`/api/v1/imports/${id}/`, { headers: auth });
    const body = (await response.json()) as ImportBody;
    if (body.status === 'succeeded' || body.status === 'failed') return body;
    if (Date.now() > deadline) throw new Error(`import ${id} still ${body.status}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
