import { type EntitySubscriberInterface, EventSubscriber, type InsertEvent } from 'typeorm';

/**
 * TypeORM turns a generated `bigint` id into a string after an insert (its issue #720), whereas
 * every read gives a number (`parseInt8`). This puts the number back, so an object's id has one
 * type whether it was just created or read (ids stay below 2^53, docs/scale-out.md).
 */
@EventSubscriber()
export class NumericGeneratedIds implements EntitySubscriberInterface {
  afterInsert(event: InsertEvent<Record<string, unknown>>): void {
    const entity = event.entity as Record<string, unknown> | undefined;
    if (!entity) return;
    for (const column of event.metadata.generatedColumns) {
      const value = entity[column.propertyName];
      if (typeof value === 'string' && /^\d+$/.test(value)) entity[column.propertyName] = Number(value);
    }
  }
}
