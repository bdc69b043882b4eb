import { type ArgumentMetadata, ValidationPipe, type ValidationError } from '@nestjs/common';
import { ApiError, type FieldErrors } from '../errors/api-error.js';
import { bulkRowsOf } from './bulk-rows.js';
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

/**
 * The global pipe: DTOs are transformed, unknown fields are rejected, errors use our shape. A
 * body's list of raw rows (BulkRows) is validated as a list and handed on untouched: the pipe
 * sees a list of as many nulls, so the list's own validator gives its usual answer.
 *
 * Path parameters pass as the URL spells them, to the route's own pipe (IdPipe for `:id`).
 * ValidationPipe would turn a `number` parameter into `+value`, so `0x1a`, `26e0`, `+26` or
 * `026` would reach IdPipe as 26 and name the object with id 26.
 */
class ApiValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'param') return value;
    const property = metadata.type === 'body' && metadata.metatype ? bulkRowsOf(metadata.metatype) : undefined;
    if (property === undefined || typeof value !== 'object' || value === null || Array.isArray(value))
      return super.transform(value, metadata);
    const rows = (value as Record<string, unknown>)[property];
    if (!Array.isArray(rows)) return super.transform(value, metadata);
    const checked = (await super.transform({ ...value, [property]: new Array<null>(rows.length).fill(null) }, metadata)) as Record<
      string,
      unknown
    >;
    checked[property] = rows;
    return checked;
  }
}

export function createValidationPipe(): ValidationPipe {
  return new ApiValidationPipe({
    ...VALIDATOR_OPTIONS,
    transform: true,
    exceptionFactory: (errors) => ApiError.validation(flattenValidationErrors(errors)),
  });
}
