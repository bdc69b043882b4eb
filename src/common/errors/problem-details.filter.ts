import { STATUS_CODES } from 'node:http';
import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { ApiError, type ErrorCode, type FieldErrors } from './api-error.js';
import { problemBody } from './problem-body.js';
import { DEPENDENCY_RETRY_AFTER_SECONDS, DEPENDENCY_UNAVAILABLE_DETAIL, unavailableDependency } from './database-errors.js';
import type { MethodIndex } from './method-index.js';
import type { OutageLog } from './outage-log.js';

const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: 'validation_error',
  401: 'not_authenticated',
  403: 'permission_denied',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'throttled',
  503: 'service_unavailable',
};

const DETAIL_BY_CODE: Partial<Record<ErrorCode, string>> = {
  validation_error: 'Some fields are invalid.',
  not_authenticated: 'Authentication credentials were not provided.',
  permission_denied: 'You do not have permission to perform this action.',
  not_found: 'Not found.',
  conflict: 'The request conflicts with the current state of the resource.',
  payload_too_large: 'The request body is larger than 1 MiB.',
  throttled: 'Request was throttled.',
  service_unavailable: 'The service is temporarily unavailable.',
  internal_error: 'An internal error occurred. Quote the request id when you report it.',
};

/** Fastify's own errors, raised before a request reaches a controller. */
const FASTIFY_ERRORS: Record<string, { status: number; code: ErrorCode; detail: (request: FastifyRequest) => string }> = {
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: 'parse_error', detail: () => 'Malformed JSON in the request body.' },
  FST_ERR_CTP_EMPTY_JSON_BODY: {
    status: 400,
    code: 'parse_error',
    detail: () => 'The request body is empty but its content type is JSON.',
  },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    status: 400,
    code: 'parse_error',
    detail: () => 'The Content-Length header does not match the body.',
  },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: 'payload_too_large', detail: () => 'The request body is larger than 1 MiB.' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    status: 415,
    code: 'unsupported_media_type',
    detail: (request) => `Unsupported media type "${mediaType(request)}"; send application/json.`,
  },
};

/**
 * The one place that turns any error into the problem+json body of SPEC section 5: our ApiErrors,
 * Nest's HttpExceptions, Fastify's parser errors, the router's 404 (or 405 when another method
 * matches), a database or Redis that is down (503 with Retry-After, SPEC section 8; logged at
 * most once per 10 s per dependency) and anything unexpected (500, logged with its stack, never
 * shown to the client).
 */
@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  constructor(
    private readonly logger: Logger,
    private readonly methods: MethodIndex,
    private readonly outages: OutageLog,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const context = host.switchToHttp();
    const request = context.getRequest<FastifyRequest>();
    const reply = context.getResponse<FastifyReply>();
    const problem = this.describe(exception, request);
    if (reply.sent) return;
    for (const [name, value] of Object.entries(problem.headers)) reply.header(name, value);
    const body = problemBody(problem.status, problem.code, problem.detail, String(request.id), problem.errors);
    void reply.status(problem.status).type('application/problem+json').send(body);
  }

  private describe(exception: unknown, request: FastifyRequest): Problem {
    if (exception instanceof ApiError) {
      return {
        status: exception.statusCode,
        code: exception.code,
        detail: exception.detail,
        errors: exception.errors,
        headers: exception.headers,
      };
    }
    const dependency = unavailableDependency(exception);
    if (dependency) {
      this.outages.report(dependency, exception, { request_id: request.id, method: request.method, route: request.routeOptions?.url });
      return {
        status: 503,
        code: 'service_unavailable',
        detail: DEPENDENCY_UNAVAILABLE_DETAIL[dependency],
        headers: { 'retry-after': String(DEPENDENCY_RETRY_AFTER_SECONDS) },
      };
    }
    if (isRouterMiss(exception, request)) {
      const allowed = this.methods.allowed(request.url);
      if (allowed.length > 0) {
        return {
          status: 405,
          code: 'method_not_allowed',
          detail: `Method "${request.method}" not allowed.`,
          headers: { allow: allowed.join(', ') },
        };
      }
      return { status: 404, code: 'not_found', detail: 'Not found.', headers: {} };
    }
    const fastifyCode = (exception as { code?: unknown } | null)?.code;
    if (typeof fastifyCode === 'string' && Object.hasOwn(FASTIFY_ERRORS, fastifyCode)) {
      const known = FASTIFY_ERRORS[fastifyCode]!;
      return { status: known.status, code: known.code, detail: known.detail(request), headers: {} };
    }
    const status = statusOf(exception);
    if (status !== undefined && status >= 400 && status < 500) {
      const code = CODE_BY_STATUS[status] ?? 'validation_error';
      return { status, code, detail: DETAIL_BY_CODE[code] ?? STATUS_CODES[status] ?? 'Bad request.', headers: {} };
    }
    this.logger.error(
      { err: exception, request_id: request.id, method: request.method, route: request.routeOptions?.url },
      'unhandled error',
    );
    if (status === 503) return { status, code: 'service_unavailable', detail: DETAIL_BY_CODE.service_unavailable!, headers: {} };
    return { status: 500, code: 'internal_error', detail: DETAIL_BY_CODE.internal_error!, headers: {} };
  }
}

interface Problem {
  status: number;
  code: ErrorCode;
  detail: string;
  errors?: FieldErrors;
  headers: Record<string, string>;
}

function statusOf(exception: unknown): number | undefined {
  if (exception instanceof HttpException) return exception.getStatus();
  const status = (exception as { statusCode?: unknown } | null)?.statusCode;
  return typeof status === 'number' ? status : undefined;
}

/** Nest answers a request that matched no route with a NotFoundException from Fastify's 404 handler. */
function isRouterMiss(exception: unknown, request: FastifyRequest): boolean {
  return exception instanceof HttpException && exception.getStatus() === 404 && request.is404;
}

function mediaType(request: FastifyRequest): string {
  // Echo only a sane token, never arbitrary header bytes.
  const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim();
  return /^[\w.+-]{1,64}\/[\w.+-]{1,64}$/.test(type) ? type : 'unknown';
}
