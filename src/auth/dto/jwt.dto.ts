import { ApiProperty } from '@nestjs/swagger';
import { RequiredString } from '../../common/validation/fields.js';

export class TokenObtainDto {
  @ApiProperty({ example: 'ana@acme.example', maxLength: 254 })
  @RequiredString({ max: 254 })
  email: string;

  @ApiProperty({ example: 'correct horse battery staple', maxLength: 1024, format: 'password' })
  @RequiredString({ max: 1024, trim: false })
  password: string;
}

export class TokenRefreshDto {
  @ApiProperty({
    description: 'A refresh token from /jwt/create/ or the last /jwt/refresh/.',
    example: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9…',
  })
  @RequiredString({ max: 4096, trim: false })
  refresh: string;
}

export class TokenVerifyDto {
  @ApiProperty({ description: 'An access or refresh token.', example: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9…' })
  @RequiredString({ max: 4096, trim: false })
  token: string;
}

export class TokenPairDto {
  @ApiProperty({ description: 'Access token (JWT, HS256), for `Authorization: Bearer …`. Lives 15 minutes by default.' })
  access: string;

  @ApiProperty({ description: 'Refresh token (JWT). Single use: /jwt/refresh/ spends it and returns a new pair. Lives 7 days by default.' })
  refresh: string;
}

/** `{}`: djoser's verify answers an empty object. */
export class EmptyDto {}
