import { applyDecorators, type ExecutionContext, SetMetadata } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import { ApiBearerAuth, ApiExtension } from '@nestjs/swagger';
import { ApiProblems } from '../errors/problem-details.schema.js';

export const ACCESS = 'auth:access';

/**
 * Who may call a route. Deny by default: a route without a marker is `workspace` (JWT or API key;
 * writes need an admin/editor or a write-scoped key). Each marker also writes the route's
 * security into the OpenAPI document, so the two cannot disagree.
 *
 * - `public`: no credential (token endpoints, health, docs).
 * - `personal`: a user's own things (`/users/me/`, logout, MCP tokens): JWT only, any role may
 *   write, an API key → 403.
 * - `public_or_personal`: no credential needed, but a request that sends one is authenticated as
 *   on a personal route and acts as that user (the social-login POST: sign in, or link to the
 *   signed-in user). A bad credential is a 401, never ignored.
 * - `mcp`: the MCP endpoint: a personal MCP token only; a JWT or an API key → 401. Roles are then
 *   checked per tool (every MCP request is a POST).
 * - `workspace_admin`: as `workspace`, but writes need an admin or a write-scoped key (an editor →
 *   403): resources that send workspace data elsewhere (webhooks, SPEC 10.5).
 */
export type Access = 'public' | 'public_or_personal' | 'personal' | 'workspace' | 'workspace_admin' | 'mcp';

export const LIMIT_BY_IP = 'auth:limit-by-ip';

/** No credential needed. */
export const Public = () => applyDecorators(SetMetadata(ACCESS, 'public' satisfies Access), ApiExtension('x-access', 'public'));

/** A public endpoint that still counts against a rate limit, per client IP (the token endpoints). */
export const PublicLimitedByIp = () => applyDecorators(Public(), SetMetadata(LIMIT_BY_IP, true), ApiProblems(429));

/** A user's own resource: JWT only (API key → 403), any role may write. */
export const Personal = () =>
  applyDecorators(
    SetMetadata(ACCESS, 'personal' satisfies Access),
    ApiExtension('x-access', 'personal'),
    ApiBearerAuth('jwt'),
    ApiProblems(401, 403),
  );

/** No credential needed; one that is sent must be a valid JWT and the route acts as that user. Counts per client IP. */
export const PublicOrPersonal = () =>
  applyDecorators(
    SetMetadata(ACCESS, 'public_or_personal' satisfies Access),
    SetMetadata(LIMIT_BY_IP, true),
    ApiExtension('x-access', 'public_or_personal'),
    ApiProblems(429),
  );

/** Anyone in the workspace reads; only admins and write-scoped API keys write. */
export const AdminWrites = () =>
  applyDecorators(SetMetadata(ACCESS, 'workspace_admin' satisfies Access), ApiExtension('x-access', 'workspace_admin'));

/** The MCP endpoint: personal MCP tokens only (SPEC section 7). */
export const McpOnly = () => SetMetadata(ACCESS, 'mcp' satisfies Access);

/** The route's access marker; `workspace` when it has none (deny by default). */
export function accessOf(reflector: Reflector, context: ExecutionContext): Access {
  return reflector.getAllAndOverride<Access | undefined>(ACCESS, [context.getHandler(), context.getClass()]) ?? 'workspace';
}
