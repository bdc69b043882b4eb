import { type ArgumentMetadata, Injectable, type PipeTransform } from '@nestjs/common';
import { ApiError } from '../errors/api-error.js';
import { MAX_ID } from '../validation/fields.js';

/**
 * `:id` path parameters. Not an integer from 1 to MAX_ID → 404, exactly like an id that does not
 * exist (the URL names no object), and never a value that could drop a TypeORM condition.
 */
@Injectable()
export class IdPipe implements PipeTransform<string, number> {
  transform(value: string, _metadata: ArgumentMetadata): number {
    if (!/^[1-9]\d{0,15}$/.test(value) || Number(value) > MAX_ID) throw ApiError.notFound();
    return Number(value);
  }
}
