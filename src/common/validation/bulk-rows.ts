import { applyDecorators } from '@nestjs/common';
import { ValidateBy } from 'class-validator';
import { MESSAGES } from './fields.js';

const BULK_ROWS = Symbol('bulkRows');

/**
 * A DTO's list of up to `max` raw rows: people or events that the service reads one by one with
 * its own reader (src/people/person-write.ts, src/signal-events/signal-event-input.ts), which
 * checks every field of every row, so one bad row rejects that row only. The list itself is
 * validated here: required, a list, at most `max` items. The global validation pipe then hands the
 * rows on as they came, without class-transformer's deep copy and the prototype-key walk of every
 * row: a quarter of the service's own CPU on such a request. The JSON parser has already refused
 * `__proto__` and `constructor.prototype` keys (src/common/http/json-body-parser.ts).
 */
export function BulkRowsField(name: string, max: number): PropertyDecorator {
  return applyDecorators(
    ((target, property) => Reflect.defineMetadata(BULK_ROWS, property, target.constructor)) as PropertyDecorator,
    ValidateBy({
      name,
      validator: {
        validate: (value: unknown) => Array.isArray(value) && value.length <= max,
        defaultMessage: (args) =>
          args?.value === undefined
            ? MESSAGES.required
            : Array.isArray(args.value)
              ? `Ensure this list has no more than ${max} items.`
              : MESSAGES.notList,
      },
    }),
  );
}

/** The property a DTO class marked with BulkRowsField, if any. */
export function bulkRowsOf(type: object): string | undefined {
  return Reflect.getMetadata(BULK_ROWS, type) as string | undefined;
}
