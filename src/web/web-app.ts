import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { problemBody } from '../common/errors/problem-body.js';

/**
 * The web interface's pages (issue 14): a single-page app built by Vite (web/) into dist/web,
 * served at /app/. Hashed files under /app/assets/ are cached for a year; every other path under
 * /app/ answers index.html (the app's own router reads the path), which is never cached, so a new
 * build reaches browsers at once. The page's policy allows scripts, styles and connections from
 * this origin only, no inline script, and no framing.
 */
export const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; " +
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  // The social-login callback page has the provider's code in its URL: never send it on.
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
} as const;

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
};

/** Paths under /app/ that belong to the server, not to the app's router: unknown ones are 404s, not index.html. */
const SERVER_PREFIXES = ['/app/session/', '/app/assets/'];

/** dist/web, found from this file both when built (dist/src/web/) and when run from source by the tests (src/web/). */
export function defaultWebRoot(): string {
  const up = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
  return basename(up) === 'dist' ? join(up, 'web') : join(up, 'dist', 'web');
}

export async function mountWebApp(fastify: FastifyInstance, root = defaultWebRoot()): Promise<void> {
  const index = join(root, 'index.html');
  if (!existsSync(index)) {
    const notBuilt = (request: FastifyRequest, reply: FastifyReply) =>
      reply
        .status(404)
        .type('application/problem+json')
        .send(problemBody(404, 'not_found', 'The web interface is not built here: run `npm run build`.', String(request.id)));
    fastify.get('/app', notBuilt);
    fastify.get('/app/*', notBuilt);
    return;
  }
  const page = readFileSync(index);
  const sendPage = (_request: FastifyRequest, reply: FastifyReply) => reply.headers(PAGE_HEADERS).type(TYPES['.html']).send(page);

  if (existsSync(join(root, 'assets'))) {
    await fastify.register(fastifyStatic, {
      root: join(root, 'assets'),
      prefix: '/app/assets/',
      decorateReply: false,
      // One route for every asset: with a route per file, each build's hashed names became new
      // values of the request metrics' route label.
      wildcard: true,
      immutable: true,
      maxAge: '365d',
      index: false,
    });
  }
  // The few files beside index.html (the icon): small, read once.
  for (const name of readdirSync(root)) {
    const path = join(root, name);
    if (name === 'index.html' || !statSync(path).isFile()) continue;
    const body = readFileSync(path);
    const type = TYPES[extname(name)] ?? 'application/octet-stream';
    fastify.get(`/app/${name}`, (_request, reply) => reply.header('cache-control', 'public, max-age=3600').type(type).send(body));
  }
  fastify.get('/app', sendPage);
  fastify.get('/app/*', (request, reply) => {
    if (SERVER_PREFIXES.some((prefix) => request.url.startsWith(prefix))) return reply.callNotFound();
    return sendPage(request, reply);
  });
}
