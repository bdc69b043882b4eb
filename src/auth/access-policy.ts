import { ApiError } from '../common/errors/api-error.js';
import type { Access } from '../common/access/access.decorators.js';
import type { Identity } from '../common/access/identity.js';

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The write rule of SPEC section 1, in one place: viewers and read-scoped keys only read. The
 * request guard applies it to every non-GET route; the MCP tools apply it to their write tools.
 */
export function assertCanWrite(identity: Identity): void {
  if (identity.kind === 'api_key' ? identity.scope !== 'write' : identity.role === 'viewer') {
    throw ApiError.permissionDenied(identity.kind === 'api_key' ? 'This API key is read-only.' : 'Viewers can only read.');
  }
}

/**
 * Writes that only an admin may make (SPEC 10.5, webhooks), or a write-scoped API key: a key is an
 * integration's credential, set up by an admin. Viewers and read-only keys are refused first, with
 * the same words as any write.
 */
export function assertCanAdminister(identity: Identity, what: string): void {
  assertCanWrite(identity);
  if (identity.kind !== 'api_key' && identity.role !== 'admin') throw ApiError.permissionDenied(`Only an admin can manage ${what}.`);
}

/**
 * Whether an authenticated caller may use a route: personal routes are for users (an API key →
 * 403); any other write needs an admin/editor or a write key, and an admin or a write key on
 * `workspace_admin` routes. MCP routes check per tool.
 */
export function assertMayCall(identity: Identity, access: Access, method: string): void {
  if (access === 'public' || access === 'mcp') return;
  if (access === 'personal') {
    if (identity.kind !== 'user') throw ApiError.permissionDenied('This endpoint is for users; an API key cannot use it.');
    return;
  }
  if (READ_METHODS.has(method)) return;
  if (access === 'workspace_admin') assertCanAdminister(identity, 'this resource');
  else assertCanWrite(identity);
}
