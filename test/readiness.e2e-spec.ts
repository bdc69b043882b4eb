import { TcpProxy } from './support/tcp-proxy.js';
import { startTestApp, type TestApp } from './support/test-app.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';

describe('/readyz during a database outage', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let api: TestApp;

  beforeAll(async () => {
    database = await createTestDatabase();
    const target = new URL(database.url);
    proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    await proxy.start();
    const viaProxy = new URL(database.url);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);
    api = await startTestApp({ DATABASE_URL: viaProxy.toString(), DATABASE_POOL_SIZE: '2' });
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
