import FindMyWay, { type HTTPMethod } from 'find-my-way';

const METHODS: HTTPMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * A second index of every registered route, keyed by method, so that a request that matched no
 * route can be told apart: another method exists on the path → 405 with `Allow`, else 404.
 * Fastify's own router answers 404 for both.
 */
export class MethodIndex {
  private readonly router = FindMyWay({ ignoreTrailingSlash: true });

  add(method: string | string[], url: string): void {
    for (const one of Array.isArray(method) ? method : [method]) {
      const upper = one.toUpperCase() as HTTPMethod;
      if (METHODS.includes(upper) && !this.router.hasRoute(upper, url)) this.router.on(upper, url, () => {});
    }
  }

  allowed(url: string): string[] {
    const path = url.split('?')[0]!;
    return METHODS.filter((method) => this.router.find(method, path) !== null);
  }
}
