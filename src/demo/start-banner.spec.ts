import { Writable } from 'node:stream';
import { pino } from 'pino';
import { announceStart } from './start-banner.js';

const demo = { customer: 1, email: 'admin@demo.example', password: 'demo-password-123' };
const config = { publicBaseUrl: undefined, port: 3000, dataDir: '/data' };

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(
        ...chunk
          .toString()
          .split('\n')
          .filter((line) => line !== ''),
      );
      done();
    },
  });
  return { lines, logger: pino({ base: undefined }, stream) };
}

describe('start banner', () => {
  it('is one JSON log line outside development, without the demo password', async () => {
    const { lines, logger } = capture();
    const written: string[] = [];
    announceStart({ ...config, nodeEnv: 'production' }, demo, logger, (text) => written.push(text));
    await new Promise((resolve) => setImmediate(resolve));
    expect(written).toEqual([]);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      msg: 'listening',
      url: 'http://localhost:3000',
      web: 'http://localhost:3000/app/',
      docs: 'http://localhost:3000/api/docs/',
      demo_customer: 1,
      demo_credentials: '/data/demo-credentials.json',
    });
    expect(lines[0]).not.toContain(demo.password);
  });

  it('is text for the terminal in development, with the demo login', () => {
    const { lines, logger } = capture();
    const written: string[] = [];
    announceStart({ ...config, nodeEnv: 'development' }, demo, logger, (text) => written.push(text));
    expect(lines).toEqual([]);
    expect(written.join('')).toContain('Web app:   http://localhost:3000/app/');
    expect(written.join('')).toContain('log in at http://localhost:3000/app/ as admin@demo.example / demo-password-123');
  });
});
