import { TcpProxy } from './support/tcp-proxy.js';
import { startTestApp, type TestApp } from './support/test-app.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';

describe('/readyz during a database outage', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let api: TestApp;

  beforeAll(async () => {
    database = await createTestDatabase();
    const front = await TcpProxy.inFrontOf(database.url, 5432);
    proxy = front.proxy;
    api = await startTestApp({ DATABASE_URL: front.url, DATABASE_POOL_SIZE: '2' });
  });

  afterAll(async () => {
    await proxy.start().catch(() => {});
    await api.close();
    await proxy.stop();
    await database.drop();
  });

  it('answers 503 while the database is unreachable and 200 once it is back, without a restart', async () => {
    expect((await api.request('/readyz')).status).toBe(200);

    await proxy.stop();
    const down = await api.request('/readyz');
    expect(down.status).toBe(503);
    expect(await down.json()).toEqual({ status: 'unavailable', checks: { database: 'unavailable' } });
    // Liveness does not depend on the database.
    expect((await api.request('/healthz')).status).toBe(200);

    await proxy.start();
    let status = 0;
    for (let attempt = 0; attempt < 20 && status !== 200; attempt++) {
      status = (await api.request('/readyz')).status;
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe(200);
  });
});
