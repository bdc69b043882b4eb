const BULK_ROWS = Symbol('bulkRows');

/**
 * Marks a DTO's list of raw rows: 1,000 people or events that the service reads one by one with
 * its own reader (src/people/person-write.ts, src/signal-events/signal-event-input.ts), which
 * checks every field of every row. The global validation pipe then checks the list itself (its
 * validator: a list, how long) and hands the rows on as they came, without class-transformer's
 * deep copy and the prototype-key walk of every row: a quarter of the service's own CPU on such a
 * request. The JSON parser has already refused `__proto__` and `constructor.prototype` keys
 * (src/common/http/json-body-parser.ts).
 */
export function BulkRows(): PropertyDecorator {
  return (target, property) => {
    Reflect.defineMetadata(BULK_ROWS, property, target.constructor);
  };
}

/** The property a DTO class marked with BulkRows, if any. */
export function bulkRowsOf(type: object): string | undefined {
  return Reflect.getMetadata(BULK_ROWS, type) as string | undefined;
}
