import type { FastifyInstance } from 'fastify';
import type { ClsService } from 'nestjs-cls';

/**
 * Gives every routed request an empty context store just before its handler chain (Nest's guards,
 * interceptors, pipes and controller) runs. preHandler comes after the body is read, so the
 * store is not lost across the socket's data events the way one opened in onRequest can be, and
 * the hook's `done` calls the handler synchronously, inside `run`. The request guard then
 * enters the caller's workspace into this store (TenantContext.enter).
 */
export function openRequestContext(fastify: FastifyInstance, cls: ClsService): void {
  fastify.addHook('preHandler', (_request, _reply, done) => cls.runWith({}, done));
}
