import { type ArgumentMetadata, Injectable, type PipeTransform } from '@nestjs/common';
import { ApiError } from '../errors/api-error.js';

/**
 * `:id` path parameters. Not a positive 32-bit integer → 404, exactly like an id that does not
 * exist (the URL names no object), and never a value that could drop a TypeORM condition.
 */
@Injectable()
export class IdPipe implements PipeTransform<string, number> {
  transform(value: string, _metadata: ArgumentMetadata): number {
    if (!/^[1-9]\d{0,9}$/.test(value) || Number(value) > 2_147_483_647) throw ApiError.notFound();
    return Number(value);
  }
}
