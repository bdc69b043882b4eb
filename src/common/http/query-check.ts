import type { FastifyInstance } from 'fastify';
import { checkQuery } from './json-limits.js';

/**
 * Refuses a query string with a NUL or an unpaired surrogate (`?search=%00`) before any handler
 * reads it: 400 `validation_error` under the parameter's name, instead of a 500 from PostgreSQL.
 */
export function registerQueryCheck(fastify: FastifyInstance): void {
  fastify.addHook('preValidation', (request, _reply, done) => {
    try {
      checkQuery(request.query);
    } catch (error) {
      return done(error as Error);
    }
    done();
  });
}
