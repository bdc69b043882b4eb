import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { ValidateBy, type ValidationArguments } from 'class-validator';

/** DRF-style messages, the ones API clients of this kind of service expect (SPEC section 5 example). */
export const MESSAGES = {
  required: 'This field is required.',
  blank: 'This field may not be blank.',
  notString: 'Not a valid string.',
  tooLong: (max: number) => `Ensure this field has no more than ${max} characters.`,
};

/**
 * A required string with exactly one message per problem: missing or null → "This field is
 * required.", not a string → "Not a valid string.", empty (after trimming unless `trim: false`)
 * → "This field may not be blank.", too long → "Ensure this field has no more than N characters.".
 * One validator rather than a chain, because class-validator's ValidateIf would also switch off
 * the required check.
 */
export function RequiredString({ max, trim = true }: { max: number; trim?: boolean }) {
  return applyDecorators(
    Transform(({ value }) => (trim && typeof value === 'string' ? value.trim() : value)),
    ValidateBy({
      name: 'requiredString',
      validator: {
        validate: (value: unknown) => typeof value === 'string' && value.length >= 1 && value.length <= max,
        defaultMessage: ({ value }: ValidationArguments) => {
          if (value === undefined || value === null) return MESSAGES.required;
          if (typeof value !== 'string') return MESSAGES.notString;
          return value.length === 0 ? MESSAGES.blank : MESSAGES.tooLong(max);
        },
      },
    }),
  );
}
