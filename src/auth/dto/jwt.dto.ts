import { ApiProperty } from '@nestjs/swagger';
import { RequiredString } from '../../common/validation/fields.js';

/**
 * A JWT as this service issues it: a JWS in compact form (RFC 7515), three base64url parts (HS256
 * signed, so the third is never empty). On input it is a shape hint: anything else is a 401
 * `token_not_valid`, as for any other bad token.
 */
export const JWT_PATTERN = '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$';

export class TokenObtainDto {
  @RequiredString({ max: 254, format: 'email', example: 'ana@acme.example' })
  email: string;

  @RequiredString({ max: 1024, trim: false, format: 'password', example: 'correct horse battery staple' })
  password: string;
}

export class TokenRefreshDto {
  @RequiredString({
    max: 4096,
    trim: false,
    pattern: JWT_PATTERN,
    description: 'A refresh token from /jwt/create/ or the last /jwt/refresh/.',
    example: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI3IiwidHlwZSI6InJlZnJlc2gifQ.c2lnbmF0dXJl',
  })
  refresh: string;
}

export class TokenVerifyDto {
  @RequiredString({
    max: 4096,
    trim: false,
    pattern: JWT_PATTERN,
    description: 'An access or refresh token.',
    example: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI3IiwidHlwZSI6ImFjY2VzcyJ9.c2lnbmF0dXJl',
  })
  token: string;
}

export class TokenPairDto {
  @ApiProperty({
    maxLength: 4096,
    pattern: JWT_PATTERN,
    example: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI3IiwidHlwZSI6ImFjY2VzcyJ9.c2lnbmF0dXJl',
    description: 'Access token (JWT, HS256), for `Authorization: Bearer …`. Lives 15 minutes by default.',
  })
  access: string;

  @ApiProperty({
    maxLength: 4096,
    pattern: JWT_PATTERN,
    example: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI3IiwidHlwZSI6InJlZnJlc2gifQ.c2lnbmF0dXJl',
    description: 'Refresh token (JWT). Single use: /jwt/refresh/ spends it and returns a new pair. Lives 7 days by default.',
  })
  refresh: string;
}

/** `{}`: djoser's verify answers an empty object. */
export class EmptyDto {}
