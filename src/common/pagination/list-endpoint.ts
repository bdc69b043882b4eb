import { applyDecorators, type Type } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiQuery, getSchemaPath } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import type { AppConfig } from '../../config/app-config.js';
import { ApiError } from '../errors/api-error.js';
import { queryFieldsOf } from '../validation/query-fields.js';
import { COUNT_SCHEMA, MAX_ID } from '../validation/fields.js';
import { MAX_PAGE_SIZE } from './pagination.js';

/**
 * The longest `next` / `previous` link: the request's own URL with another page (Node reads at most
 * 16 KiB of request head) behind the public base URL.
 */
const URL_MAX_LENGTH = 16 * 1024 + 2048;

/**
 * The absolute URL the client called, for `next`/`previous` (SPEC section 4): on PUBLIC_BASE_URL
 * when set, else on the request's Host, which must then be one of ALLOWED_HOSTS (a 400 otherwise,
 * as in Django), so a forged Host cannot put another site into the links a client follows.
 */
export function requestUrl(request: FastifyRequest, config: Pick<AppConfig, 'publicBaseUrl' | 'allowedHosts'>): URL {
  if (config.publicBaseUrl !== undefined) return new URL(request.url, `${config.publicBaseUrl}/`);
  if (!hostAllowed(request.hostname, config.allowedHosts)) throw ApiError.field('host', 'This Host is not served here.');
  return new URL(request.url, `${request.protocol}://${request.host}/`);
}

function hostAllowed(hostname: string, allowed: readonly string[]): boolean {
  const host = hostname.toLowerCase();
  return allowed.some(
    (entry) => entry === '*' || entry === host || (entry.startsWith('.') && (host.endsWith(entry) || host === entry.slice(1))),
  );
}

/**
 * Documents a list operation: the filters its query DTO declares (a PagedQuery class, see
 * list-query.ts), `page`, `page_size`, `ordering` over the DTO's `orderingFields`, and the envelope.
 * The same DTO reads the request, so the document never offers a parameter or an ordering the
 * server reads otherwise.
 */
export function ApiList(item: Type<unknown>, query: Type<unknown> & { readonly orderingFields: readonly string[] }) {
  const orderingFields = query.orderingFields;
  const orderings = orderingFields.flatMap((field) => [field, `-${field}`]);
  return applyDecorators(
    ApiExtraModels(item),
    ...queryFieldsOf(query).map((filter) =>
      ApiQuery({ name: filter.name, required: false, description: filter.description, schema: filter.schema }),
    ),
    ApiQuery({
      name: 'page',
      required: false,
      description: '1-based page number. Past the end, 0 or not a number → 404 `Invalid page.`',
      schema: { type: 'integer', minimum: 1, maximum: MAX_ID, default: 1 },
    }),
    ApiQuery({
      name: 'page_size',
      required: false,
      description: 'Items per page; values above 100 are clamped to 100.',
      schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
    }),
    ApiQuery({
      name: 'ordering',
      required: false,
      description: 'Sort field, `-` for descending. Default `-id` (newest first).',
      schema: { type: 'string', enum: orderings, default: '-id' },
    }),
    ApiOkResponse({
      description: 'One page of results.',
      schema: {
        type: 'object',
        required: ['count', 'next', 'previous', 'results'],
        properties: {
          count: { ...COUNT_SCHEMA, example: 57, description: 'Total number of items over all pages.' },
          next: {
            type: 'string',
            format: 'uri',
            maxLength: URL_MAX_LENGTH,
            nullable: true,
            example: 'https://api.example.com/api/v1/signals/?page=3&status=1',
          },
          previous: {
            type: 'string',
            format: 'uri',
            maxLength: URL_MAX_LENGTH,
            nullable: true,
            example: 'https://api.example.com/api/v1/signals/?page=1&status=1',
          },
          results: { type: 'array', maxItems: MAX_PAGE_SIZE, items: { $ref: getSchemaPath(item) } },
        },
      },
    }),
  );
}
