import { createParamDecorator, type ExecutionContext, Inject, Injectable, type ArgumentMetadata, type PipeTransform } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.token.js';
import { readQuery } from '../validation/query-fields.js';
import { requestUrl } from './list-endpoint.js';
import { ORDERING_FIELDS, type PageRequest, parsePageRequest } from './pagination.js';

/**
 * A list's query DTO: its filters are fields declared with the filter decorators of
 * common/validation/query-fields.ts, and `orderingFields` is what `ordering` may name.
 */
export class PagedQuery {
  static readonly orderingFields: readonly string[] = ORDERING_FIELDS;

  /** `page`, `page_size` and `ordering`, read as parsePageRequest reads them. */
  page!: PageRequest;
}

export type PagedQueryClass<T extends PagedQuery = PagedQuery> = (new () => T) & { readonly orderingFields: readonly string[] };

/**
 * Reads a list's query string, or an MCP list tool's arguments, into its query DTO. The page is
 * read first, so a bad `page` is a 404 before any filter is a 400.
 */
export function readListQuery<T extends PagedQuery>(dto: PagedQueryClass<T>, query: Record<string, unknown>): T {
  const page = parsePageRequest(query, { orderingFields: dto.orderingFields });
  const read = readQuery(dto, query);
  read.page = page;
  return read;
}

@Injectable()
class ListQueryPipe implements PipeTransform {
  transform(query: Record<string, unknown> | undefined, { metatype }: ArgumentMetadata): PagedQuery {
    if (!metatype || !(metatype.prototype instanceof PagedQuery))
      throw new Error('@ListQuery() needs a parameter typed with a PagedQuery class');
    return readListQuery(metatype as PagedQueryClass, query ?? {});
  }
}

const queryString = createParamDecorator(
  (_data: unknown, context: ExecutionContext) => context.switchToHttp().getRequest<FastifyRequest>().query,
);

/**
 * The list's query string read into the parameter's query DTO. A custom parameter, not `@Query()`:
 * the global ValidationPipe would refuse unknown parameters, which SPEC section 4 ignores.
 */
export const ListQuery = (): ParameterDecorator => queryString(undefined, new ListQueryPipe());

@Injectable()
class PageLinksPipe implements PipeTransform {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  transform(request: FastifyRequest): URL {
    return requestUrl(request, this.config);
  }
}

const request = createParamDecorator((_data: unknown, context: ExecutionContext) => context.switchToHttp().getRequest<FastifyRequest>());

/** The absolute URL the client called, which the page's `next` and `previous` links are built on (requestUrl). */
export const PageLinks = (): ParameterDecorator => request(undefined, PageLinksPipe);
