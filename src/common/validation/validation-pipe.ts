import { ValidationPipe, type ValidationError } from '@nestjs/common';
import { ApiError, type FieldErrors } from '../errors/api-error.js';
import { NESTED_ERRORS } from './fields.js';

/**
 * Flattens class-validator's error tree into SPEC section 5's `errors`: field path → messages,
 * with nested paths joined by dots (`rules.a.b`, `connections.0`).
 */
export function flattenValidationErrors(errors: ValidationError[], parent = ''): FieldErrors {
  const flat: FieldErrors = {};
  for (const error of errors) {
    const path = parent ? `${parent}.${error.property}` : error.property;
    if (error.constraints) {
      const { [NESTED_ERRORS]: nested, ...constraints } = error.constraints;
      if (Object.keys(constraints).length > 0) {
        flat[path] = Object.entries(constraints).map(([name, message]) =>
          // forbidNonWhitelisted speaks of "properties"; clients think in fields.
          name === 'whitelistValidation' ? 'Unknown field.' : message,
        );
      }
      if (nested !== undefined) {
        for (const [below, messages] of Object.entries(JSON.parse(nested) as FieldErrors))
          flat[below === '' ? path : `${path}.${below}`] = messages;
      }
    }
    if (error.children?.length) Object.assign(flat, flattenValidationErrors(error.children, path));
  }
  return flat;
}

/** Unknown fields are rejected; one message per field; values never echoed into errors. */
export const VALIDATOR_OPTIONS = {
  whitelist: true,
  forbidNonWhitelisted: true,
  forbidUnknownValues: true,
  stopAtFirstError: true,
  validationError: { target: false, value: false },
} as const;

/** The global pipe: DTOs are transformed, unknown fields are rejected, errors use our shape. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    ...VALIDATOR_OPTIONS,
    transform: true,
    exceptionFactory: (errors) => ApiError.validation(flattenValidationErrors(errors)),
  });
}
