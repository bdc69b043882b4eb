import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiResponse, type HeaderObject, type ResponseObject } from '@nestjs/swagger';
import { ERROR_CODES } from './api-error.js';
import { REQUEST_ID_PATTERN } from '../http/request-id.js';

/** The error body of SPEC section 5, as the API document shows it. */
export class ProblemDetailsDto {
  @ApiProperty({ enum: ['about:blank'], example: 'about:blank' })
  type: string;

  @ApiProperty({ maxLength: 64, example: 'Bad Request', description: 'The HTTP reason phrase of `status`.' })
  title: string;

  @ApiProperty({ type: 'integer', minimum: 400, maximum: 599, example: 400 })
  status: number;

  @ApiProperty({ enum: ERROR_CODES, example: 'validation_error', description: 'Stable machine-readable error code.' })
  code: string;

  @ApiProperty({ maxLength: 1024, example: 'Some fields are invalid.' })
  detail: string;

  @ApiPropertyOptional({
    description: 'Only for `validation_error`: field path (nested paths joined with dots) → messages.',
    type: 'object',
    // One entry per field of the input (a body has at most 1,000 keys), a few messages each.
    maxProperties: 1000,
    additionalProperties: { type: 'array', items: { type: 'string', maxLength: 1024 }, maxItems: 16 },
    example: { name: ['This field is required.'] },
  })
  errors?: Record<string, string[]>;

  @ApiProperty({
    minLength: 1,
    maxLength: 128,
    pattern: REQUEST_ID_PATTERN,
    example: '9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10',
    description: 'Equals the X-Request-Id response header.',
  })
  request_id: string;
}

const DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid input (`validation_error` with `errors`) or malformed JSON (`parse_error`).',
  401: 'Missing credentials (`not_authenticated`) or a bad one (`authentication_failed`, `token_not_valid`).',
  403: 'Authenticated, but not allowed to do this (`permission_denied`).',
  404: 'No such object in your workspace (`not_found`).',
  405: 'The path exists but not with this method (`method_not_allowed`); see the `Allow` header.',
  409: 'Conflicts with the current state (`conflict`).',
  413: 'Request body over 1 MiB (`payload_too_large`).',
  415: 'Request body is not JSON (`unsupported_media_type`).',
  429: 'Too many requests (`throttled`); retry after `Retry-After` seconds.',
  500: 'Unexpected error (`internal_error`); quote the request id.',
  503:
    'The service cannot answer now: a dependency (PostgreSQL, Redis) is down, or it is shutting down (`service_unavailable`). ' +
    'Retry later: after `Retry-After` seconds when it is given.',
};

/** What each status's body looks like, with its real code: Swagger UI shows one per error response. */
const EXAMPLES: Record<number, { title: string; code: string; detail: string; errors?: Record<string, string[]> }> = {
  400: {
    title: 'Bad Request',
    code: 'validation_error',
    detail: 'Some fields are invalid.',
    errors: { name: ['This field is required.'] },
  },
  401: { title: 'Unauthorized', code: 'not_authenticated', detail: 'Authentication credentials were not provided.' },
  403: { title: 'Forbidden', code: 'permission_denied', detail: 'Viewers can only read.' },
  404: { title: 'Not Found', code: 'not_found', detail: 'Not found.' },
  405: { title: 'Method Not Allowed', code: 'method_not_allowed', detail: 'Method "PUT" not allowed.' },
  409: { title: 'Conflict', code: 'conflict', detail: 'The request conflicts with the current state of the resource.' },
  413: { title: 'Payload Too Large', code: 'payload_too_large', detail: 'The request body is larger than 1 MiB.' },
  415: {
    title: 'Unsupported Media Type',
    code: 'unsupported_media_type',
    detail: 'Unsupported media type "text/plain"; send application/json.',
  },
  429: { title: 'Too Many Requests', code: 'throttled', detail: 'Request limit of 600 per minute reached. Try again in 12 seconds.' },
  500: {
    title: 'Internal Server Error',
    code: 'internal_error',
    detail: 'An internal error occurred. Quote the request id when you report it.',
  },
  503: { title: 'Service Unavailable', code: 'service_unavailable', detail: 'The database is temporarily unavailable. Try again shortly.' },
};

/** What an operation shows instead of the status's usual example body. */
export type ProblemExample = Partial<Pick<(typeof EXAMPLES)[number], 'code' | 'detail' | 'errors'>>;

function exampleOf(status: number, override: ProblemExample = {}) {
  const example = EXAMPLES[status];
  if (!example) return undefined;
  return { type: 'about:blank', status, ...example, ...override, request_id: '9b1c2f4e-6d0a-4c55-8f7e-1f3b2a9c7d10' };
}

/** The statuses SPEC sections 5 and 8 send with `Retry-After`. */
const RETRY_AFTER_STATUSES = new Set([429, 503]);

const RETRY_AFTER: HeaderObject = {
  description: 'Seconds to wait before trying again (at most a day; in practice seconds to minutes).',
  schema: { type: 'integer', minimum: 0, maximum: 86400 },
};

/**
 * One error response of the document: the problem+json schema, and `Retry-After` where it is sent.
 * Used by the decorators below and by the document builder (openapi.ts), so they say the same.
 */
export function problemResponse(status: number, description = DESCRIPTIONS[status] ?? 'Error.', example?: ProblemExample): ResponseObject {
  return {
    description,
    ...(RETRY_AFTER_STATUSES.has(status) ? { headers: { 'Retry-After': RETRY_AFTER } } : {}),
    content: {
      'application/problem+json': {
        schema: { $ref: '#/components/schemas/ProblemDetailsDto' },
        ...(exampleOf(status, example) ? { example: exampleOf(status, example) } : {}),
      },
    },
  };
}

/** Documents one error status of an operation, with a description (and optionally an example body) of its own. */
export function ApiProblem(status: number, description: string, example?: ProblemExample) {
  return ApiResponse({ status, ...problemResponse(status, description, example) });
}

/** Documents the given error statuses of an operation with the problem+json schema. */
export function ApiProblems(...statuses: number[]) {
  return applyDecorators(...statuses.map((status) => ApiResponse({ status, ...problemResponse(status) })));
}
