import { HttpException } from '@nestjs/common';

/** The stable error codes of SPEC section 5. */
export const ERROR_CODES = [
  'validation_error',
  'parse_error',
  'not_authenticated',
  'authentication_failed',
  'token_not_valid',
  'permission_denied',
  'not_found',
  'method_not_allowed',
  'conflict',
  'payload_too_large',
  'unsupported_media_type',
  'throttled',
  'internal_error',
  'service_unavailable',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** Field path (`rules.a.b`) → messages. */
export type FieldErrors = Record<string, string[]>;

/**
 * An error the client is meant to see. The exception filter renders it as problem+json
 * (SPEC section 5); anything that is not an ApiError is answered with a generic body.
 */
export class ApiError extends HttpException {
  constructor(
    readonly statusCode: number,
    readonly code: ErrorCode,
    readonly detail: string,
    readonly errors?: FieldErrors,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail, statusCode);
  }

  static validation(errors: FieldErrors, detail = 'Some fields are invalid.'): ApiError {
    return new ApiError(400, 'validation_error', detail, errors);
  }

  /** One invalid field, e.g. `ApiError.field('ordering', 'Unknown field "x".')`. */
  static field(path: string, message: string): ApiError {
    return ApiError.validation({ [path]: [message] });
  }

  static notFound(detail = 'Not found.'): ApiError {
    return new ApiError(404, 'not_found', detail);
  }

  static permissionDenied(detail = 'You do not have permission to perform this action.'): ApiError {
    return new ApiError(403, 'permission_denied', detail);
  }

  static conflict(detail: string): ApiError {
    return new ApiError(409, 'conflict', detail);
  }
}
