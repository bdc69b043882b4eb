import { applyDecorators, SetMetadata, UseInterceptors } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import { ApiProblem } from '../common/errors/problem-details.schema.js';
import { IDEMPOTENT_STATUS, IdempotencyInterceptor } from './idempotency.interceptor.js';

/** A create that honours `Idempotency-Key` (SPEC section 8); `status` is the success status a replay repeats. */
export const Idempotent = (status = 201) =>
  applyDecorators(
    SetMetadata(IDEMPOTENT_STATUS, status),
    UseInterceptors(IdempotencyInterceptor),
    ApiHeader({
      name: 'Idempotency-Key',
      required: false,
      description:
        'Any unique string of 1–255 characters. A retry with the same key and the same body within 24 hours returns the first ' +
        'response (with `Idempotent-Replayed: true`) and creates nothing; the same key with a different body is a 409. Keys are per credential.',
      schema: { type: 'string', minLength: 1, maxLength: 255 },
    }),
    ApiProblem(409, 'The Idempotency-Key was used with a different request, or that request is still running (`conflict`).'),
  );
