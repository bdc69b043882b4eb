import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/**
 * The two ad platforms as the sync benchmark needs them (bench/syncs.ts): they answer at once, so
 * what is measured is the service. The paths and answer shapes are those of the Data Manager API
 * (user lists, `audienceMembers:ingest`/`:remove`, `requestStatus:retrieve`) and of Meta's custom
 * audiences (`act_{id}/customaudiences`, `{id}/users`, the audience's fields), as the clients of
 * src/destinations send and read them; what the platforms validate is the tests' fake
 * (test/support/fake-ad-platforms.ts). Members are counted, not kept.
 */
export interface BenchPlatforms {
  url: string;
  counts: {
    googleIngested: number;
    googleRemoved: number;
    googleRequests: number;
    metaAdded: number;
    metaRemoved: number;
    metaRequests: number;
  };
  close(): Promise<void>;
}

function answer(response: ServerResponse, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

export async function startBenchPlatforms(): Promise<BenchPlatforms> {
  const counts = { googleIngested: 0, googleRemoved: 0, googleRequests: 0, metaAdded: 0, metaRemoved: 0, metaRequests: 0 };
  let nextId = 7_000_000_001;
  const handle = (request: IncomingMessage, body: string, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'http://bench');
    const path = url.pathname;
    if (/^\/v1\/accountTypes\/GOOGLE_ADS\/accounts\/\d+\/userLists$/.test(path) && request.method === 'POST') {
      const id = String(nextId++);
      return answer(response, { name: `${path}/${id}`, id, displayName: 'bench', membershipStatus: 'OPEN', ingestedUserListInfo: {} });
    }
    const list = /^\/v1\/accountTypes\/GOOGLE_ADS\/accounts\/\d+\/userLists\/(\d+)$/.exec(path);
    if (list)
      return answer(response, {
        name: path.slice(4),
        id: list[1],
        displayName: 'bench',
        membershipStatus: 'OPEN',
        ingestedUserListInfo: { contactIdInfo: { matchRatePercentage: 60 } },
      });
    if (path === '/v1/audienceMembers:ingest' || path === '/v1/audienceMembers:remove') {
      const members = (JSON.parse(body) as { audienceMembers: unknown[] }).audienceMembers.length;
      counts.googleRequests++;
      if (path.endsWith('ingest')) counts.googleIngested += members;
      else counts.googleRemoved += members;
      return answer(response, { requestId: randomUUID() });
    }
    if (path === '/v1/requestStatus:retrieve') return answer(response, { requestStatusPerDestination: [{ requestStatus: 'SUCCESS' }] });
    if (/^\/v25\.0\/act_\d+\/customaudiences$/.test(path)) return answer(response, { id: String(nextId++) });
    const users = /^\/v25\.0\/(\d+)\/users$/.exec(path);
    if (users) {
      const rows = (JSON.parse(body) as { payload: { data: unknown[] } }).payload.data.length;
      counts.metaRequests++;
      if (request.method === 'POST') counts.metaAdded += rows;
      else counts.metaRemoved += rows;
      return answer(response, { audience_id: users[1], num_received: rows, num_invalid_entries: 0 });
    }
    const node = /^\/v25\.0\/(\d+)$/.exec(path);
    if (node)
      return answer(response, {
        id: node[1],
        name: 'bench',
        approximate_count_lower_bound: 500_000,
        approximate_count_upper_bound: 600_000,
        operation_status: { code: 200, description: 'Normal' },
      });
    response.writeHead(404, { 'content-type': 'application/json' });
    response.end('{"error":{"message":"not found"}}');
  };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => handle(request, Buffer.concat(chunks).toString(), response));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    counts,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
