import { applyDecorators, type Type } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiQuery, getSchemaPath } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { ORDERING_FIELDS } from '../tenancy/tenant-repository.js';

/**
 * The absolute URL the client called, on PUBLIC_BASE_URL when set (behind a proxy, SPEC section 4),
 * else on the Host the request came with.
 */
export function requestUrl(request: FastifyRequest, publicBaseUrl: string | undefined): URL {
  const base = publicBaseUrl ?? `${request.protocol}://${request.host}`;
  return new URL(request.url, `${base}/`);
}

export interface ListQueryParameter {
  name: string;
  description: string;
  schema: Record<string, unknown>;
}

/** Documents a list operation: its filters, `page`, `page_size`, `ordering` and the envelope. */
export function ApiList(item: Type<unknown>, filters: ListQueryParameter[]) {
  const orderings = ORDERING_FIELDS.flatMap((field) => [field, `-${field}`]);
  return applyDecorators(
    ApiExtraModels(item),
    ...filters.map((filter) => ApiQuery({ name: filter.name, required: false, description: filter.description, schema: filter.schema })),
    ApiQuery({
      name: 'page',
      required: false,
      description: '1-based page number. Past the end, 0 or not a number → 404 `Invalid page.`',
      schema: { type: 'integer', minimum: 1, default: 1 },
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
          count: { type: 'integer', example: 57, description: 'Total number of items over all pages.' },
          next: { type: 'string', format: 'uri', nullable: true, example: 'https://api.example.com/api/v1/signals/?page=3&status=1' },
          previous: { type: 'string', format: 'uri', nullable: true, example: 'https://api.example.com/api/v1/signals/?page=1&status=1' },
          results: { type: 'array', items: { $ref: getSchemaPath(item) } },
        },
      },
    }),
  );
}
