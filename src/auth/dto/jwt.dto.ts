import { ApiProperty } from '@nestjs/swagger';
import { RequiredString } from '../../common/validation/fields.js';

export class TokenObtainDto {
  @RequiredString({ max: 254, example: 'ana@acme.example' })
  email: string;

  @RequiredString({ max: 1024, trim: false, format: 'password', example: 'correct horse battery staple' })
  password: string;
}

export class TokenRefreshDto {
  @RequiredString({
    max: 4096,
    trim: false,
    description: 'A refresh token from /jwt/create/ or the last /jwt/refresh/.',
    example: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9…',
  })
  refresh: string;
}

export class TokenVerifyDto {
  @RequiredString({ max: 4096, trim: false, description: 'An access or refresh token.', example: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9…' })
  token: string;
}

export class TokenPairDto {
  @ApiProperty({
    maxLength: 4096,
    example: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI3IiwidHlwZSI6ImFjY2VzcyJ9.c2lnbmF0dXJl',
    description: 'Access token (JWT, HS256), for `Authorization: Bearer …`. Lives 15 minutes by default.',
  })
  access: string;

  @ApiProperty({
    maxLength: 4096,
    example: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI3IiwidHlwZSI6InJlZnJlc2gifQ.c2lnbmF0dXJl',
    description: 'Refresh token (JWT). Single use: /jwt/refresh/ spends it and returns a new pair. Lives 7 days by default.',
  })
  refresh: string;
}

/** `{}`: djoser's verify answers an empty object. */
export class EmptyDto {}
