import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { Identity } from '../../auth/identity.js';
import { ApiError } from '../errors/api-error.js';

const brand: unique symbol = Symbol('Tenant');

/**
 * The workspace a piece of work is scoped to. Every tenant repository method requires one, and
 * one can only be made from an authenticated identity (or by the operator's CLI, which names the
 * customer explicitly), so a query that forgets the tenant does not compile.
 */
export class Tenant {
  declare private readonly [brand]: true;

  private constructor(readonly customerId: number) {}

  static of(identity: Identity): Tenant {
    return new Tenant(identity.customerId);
  }

  /** For operator tooling only (admin CLI): the customer is named on the command line. */
  static forOperator(customerId: number): Tenant {
    if (!Number.isInteger(customerId) || customerId < 1) throw new Error(`Invalid customer id ${customerId}`);
    return new Tenant(customerId);
  }
}

/** The caller's identity, as the global guard established it. */
function identityOf(context: ExecutionContext): Identity {
  const identity = context.switchToHttp().getRequest<FastifyRequest>().identity;
  // The guard denies by default, so this only happens on a route wrongly marked public.
  if (!identity) throw new ApiError(401, 'not_authenticated', 'Authentication credentials were not provided.');
  return identity;
}

/** `@CurrentIdentity() identity: Identity`. */
export const CurrentIdentity = createParamDecorator((_data: unknown, context: ExecutionContext): Identity => identityOf(context));
