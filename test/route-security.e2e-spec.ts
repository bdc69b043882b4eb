import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { ModulesContainer, Reflector } from '@nestjs/core';
import { ACCESS, LIMIT_BY_IP } from '../src/common/access/access.decorators.js';
import { startTestApp, type TestApp } from './support/test-app.js';

const COMMITTED = fileURLToPath(new URL('./route-security.json', import.meta.url));

/**
 * Who may call each route, read from the decorators the guard reads, against a committed table
 * (test/route-security.json). A change to access shows up as a diff in review; regenerate with
 * UPDATE_ROUTE_SECURITY=1.
 */
describe('route security', () => {
  let api: TestApp;
  beforeAll(async () => {
    api = await startTestApp();
  });
  afterAll(() => api.close());

  it('matches the committed table', async () => {
    const modules = api.app.get(ModulesContainer);
    const reflector = api.app.get(Reflector);
    const rows: string[] = [];
    const wrappers = [...modules.values()].flatMap((module) => [...module.controllers.values()]);
    for (const wrapper of wrappers) {
      const controller = wrapper.metatype as (new (...args: never[]) => unknown) | undefined;
      if (!controller) continue;
      const base = String(Reflect.getMetadata(PATH_METADATA, controller) ?? '');
      for (const name of Object.getOwnPropertyNames(controller.prototype)) {
        const handler = (controller.prototype as Record<string, unknown>)[name];
        if (typeof handler !== 'function' || Reflect.getMetadata(METHOD_METADATA, handler) === undefined) continue;
        const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod];
        const path = `/${[base, String(Reflect.getMetadata(PATH_METADATA, handler) ?? '')].filter((part) => part && part !== '/').join('/')}`;
        const access = reflector.getAllAndOverride<string | undefined>(ACCESS, [handler, controller]) ?? 'workspace';
        const write = !['GET', 'HEAD', 'OPTIONS'].includes(method);
        const writes =
          write && access === 'workspace'
            ? ' (admin/editor or write key)'
            : write && access === 'workspace_admin'
              ? ' (admin or write key)'
              : '';
        const limited = reflector.get<boolean | undefined>(LIMIT_BY_IP, handler) ? ' (rate-limited per IP)' : '';
        rows.push(`${method} ${path} → ${access}${writes}${limited}`);
      }
    }
    rows.sort();
    const text = `${JSON.stringify(rows, null, 2)}\n`;
    if (process.env.UPDATE_ROUTE_SECURITY === '1') await writeFile(COMMITTED, text);
    expect(rows).toEqual(JSON.parse(await readFile(COMMITTED, 'utf8').catch(() => '[]')));
  });
});
