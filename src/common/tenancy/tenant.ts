const brand: unique symbol = Symbol('Tenant');

/**
 * The workspace a piece of work is scoped to, as the TenantContext carries it. One is made from
 * a verified identity by the request guard, or by operator tooling that names the
 * customer explicitly (the CLI, jobs, tests); ESLint keeps both factories there.
 */
export class Tenant {
  declare private readonly [brand]: true;

  private constructor(readonly customerId: number) {}

  /** For the request guard: the workspace of the identity it has just verified. */
  static of(identity: { readonly customerId: number }): Tenant {
    return new Tenant(identity.customerId);
  }

  /** For operator tooling only (admin CLI, jobs, tests): the customer is named explicitly. */
  static forOperator(customerId: number): Tenant {
    if (!Number.isInteger(customerId) || customerId < 1) throw new Error(`Invalid customer id ${customerId}`);
    return new Tenant(customerId);
  }
}
