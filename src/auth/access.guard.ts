import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../common/errors/api-error.js';
import { accessOf } from './access.decorators.js';
import { assertMayCall } from './access-policy.js';

/** The third global guard (SPEC section 1): the route's access rule for the authenticated caller, by the AccessPolicy. */
@Injectable()
export class AccessGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const access = accessOf(this.reflector, context);
    if (access === 'public') return true;
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    // Unreachable while the authentication guard runs first; kept so a reordering fails closed.
    if (!request.identity) throw new ApiError(401, 'not_authenticated', 'Authentication credentials were not provided.');
    assertMayCall(request.identity, access, request.method);
    return true;
  }
}
