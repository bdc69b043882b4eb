import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { ApiError } from '../errors/api-error.js';
import { flattenValidationErrors, VALIDATOR_OPTIONS } from './validation-pipe.js';

/**
 * Validates a plain object against a DTO class exactly as the HTTP ValidationPipe does, for input
 * that does not arrive through a controller (MCP tool arguments): one set of rules, two doors.
 */
export async function validateDto<T extends object>(dto: new () => T, input: unknown): Promise<T> {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw ApiError.validation({ non_field_errors: ['Expected a JSON object.'] });
  const instance = plainToInstance(dto, input);
  const errors = await validate(instance, VALIDATOR_OPTIONS);
  if (errors.length > 0) throw ApiError.validation(flattenValidationErrors(errors));
  return instance;
}
