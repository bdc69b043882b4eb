import type { Logger } from 'pino';
import type { AppConfig } from '../config/app-config.js';
import type { DemoCredentials } from './demo-workspace.js';

/**
 * What `npm start` says once it listens. In development: a few lines of text for the person at the
 * terminal, the demo login included (the one place its password is shown). Anywhere else every
 * stdout line is JSON, so the banner is one log line, without the password (it stays in its file).
 */
export function announceStart(
  config: Pick<AppConfig, 'nodeEnv' | 'publicBaseUrl' | 'port' | 'dataDir'>,
  demo: DemoCredentials | undefined,
  logger: Pick<Logger, 'info'>,
  write: (text: string) => void,
): void {
  const base = config.publicBaseUrl ?? `http://localhost:${config.port}`;
  if (config.nodeEnv !== 'development') {
    logger.info(
      {
        url: base,
        web: `${base}/app/`,
        docs: `${base}/api/docs/`,
        openapi: `${base}/api/schema/`,
        ...(demo && { demo_customer: demo.customer, demo_credentials: `${config.dataDir}/demo-credentials.json` }),
      },
      'listening',
    );
    return;
  }
  const lines = [
    `Audience and Signal Platform API listening on ${base}`,
    `  Web app:   ${base}/app/`,
    `  API docs:  ${base}/api/docs/`,
    `  OpenAPI:   ${base}/api/schema/`,
  ];
  if (demo) {
    lines.push(
      `  Demo workspace ${demo.customer}: log in at ${base}/app/ as ${demo.email} / ${demo.password}`,
      `    curl -s ${base}/api/v1/jwt/create/ -H 'Content-Type: application/json' -d '{"email":"${demo.email}","password":"${demo.password}"}'`,
    );
  }
  write(`\n${lines.join('\n')}\n\n`);
}
