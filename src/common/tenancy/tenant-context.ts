import { Injectable } from '@nestjs/common';
import { ClsService } from 'nestjs-cls';
import { Tenant } from './tenant.js';

const TENANT = Symbol('tenant');

/** Thrown when tenant data is reached outside a workspace: a bug, never a client's fault (so a 500). */
export class MissingTenantContextError extends Error {
  constructor() {
    super('No tenant context: workspace data was reached outside a request or TenantContext.run()');
    this.name = 'MissingTenantContextError';
  }
}

/**
 * The workspace the current piece of work belongs to, carried by AsyncLocalStorage (nestjs-cls)
 * instead of a parameter or a request-scoped provider. Each HTTP request gets an empty store
 * before its guard runs (see `openRequestContext`); the request guard enters the caller's
 * workspace once the credential is verified. Operator tooling, jobs and tests name the workspace
 * with `run()`. `TenantRepository` is the only reader, and `current()` throws when nothing was
 * entered, so a query can never silently run unscoped (Twenty's workspace context does the same).
 */
@Injectable()
export class TenantContext {
  constructor(private readonly cls: ClsService) {}

  current(): Tenant {
    const tenant = this.cls.isActive() ? (this.cls.get(TENANT) as Tenant | undefined) : undefined;
    if (tenant === undefined) throw new MissingTenantContextError();
    return tenant;
  }

  /**
   * The workspace of the current work, or undefined outside any, without throwing: for counting
   * what a workspace uses (WorkspacePoolShare), never for scoping data (that is `current()`).
   */
  workspaceId(): number | undefined {
    return this.cls.isActive() ? (this.cls.get(TENANT) as Tenant | undefined)?.customerId : undefined;
  }

  /** Enters `tenant` for the rest of the current request. The request's store must be open. */
  enter(tenant: Tenant): void {
    if (!this.cls.isActive()) throw new MissingTenantContextError();
    this.cls.set(TENANT, tenant);
  }

  /** Runs `work` in `tenant`'s workspace: for the CLI, jobs and tests, which have no request. */
  run<T>(tenant: Tenant, work: () => T): T {
    return this.cls.run(() => {
      this.cls.set(TENANT, tenant);
      return work();
    });
  }
}
