import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors/api-error.js';
import type { Identity } from './identity.js';

/** `@CurrentIdentity() identity: Identity`: the caller, as the request guard established it. */
export const CurrentIdentity = createParamDecorator((_data: unknown, context: ExecutionContext): Identity => {
  const identity = context.switchToHttp().getRequest<FastifyRequest>().identity;
  // The guard denies by default, so this only happens on a route wrongly marked public.
  if (!identity) throw new ApiError(401, 'not_authenticated', 'Authentication credentials were not provided.');
  return identity;
});
