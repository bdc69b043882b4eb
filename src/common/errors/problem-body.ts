import { STATUS_CODES } from 'node:http';
import type { ErrorCode, FieldErrors } from './api-error.js';

/** The problem+json body of SPEC section 5, keys in the order every error body shows them. */
export interface ProblemBody {
  type: 'about:blank';
  title: string;
  status: number;
  code: ErrorCode;
  detail: string;
  errors?: FieldErrors;
  request_id: string;
}

/**
 * Builds the error body, for the exception filter and for the few answers sent before Nest is
 * reached (the router's errors, see app.ts), so that both stay the same shape.
 */
export function problemBody(status: number, code: ErrorCode, detail: string, requestId: string, errors?: FieldErrors): ProblemBody {
  return {
    type: 'about:blank',
    title: STATUS_CODES[status] ?? 'Error',
    status,
    code,
    detail,
    ...(errors ? { errors } : {}),
    request_id: requestId,
  };
}
