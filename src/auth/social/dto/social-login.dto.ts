import { ApiProperty } from '@nestjs/swagger';
import { ID_SCHEMA } from '../../../common/validation/fields.js';
import { RequiredString, TextField } from '../../../common/validation/fields.js';
import { RANDOM_SECRET_PATTERN } from '../../../common/crypto/secret-hash.js';
import { TokenPairDto } from '../../dto/jwt.dto.js';

/** The GET's query: where the provider sends the browser back. */
export class SocialLoginStartQuery {
  @RequiredString({
    max: 2048,
    trim: false,
    format: 'uri',
    description: 'Where the provider sends the browser back; one of SOCIAL_AUTH_ALLOWED_REDIRECT_URIS, exactly.',
    example: 'https://app.example.com/auth/callback/google',
  })
  redirect_uri: string;
}

export class AuthorizationUrlDto {
  @ApiProperty({
    maxLength: 4096,
    description: 'Send the browser here. It comes back to `redirect_uri` with `code` and `state` (and, from Google, `iss`).',
    example:
      'https://accounts.google.com/o/oauth2/v2/auth?client_id=1234.apps.googleusercontent.com&response_type=code&scope=openid%20email&state=q3Hk0vVQ2l9zR4sE2n3t8pX1yB6cD0fA5gH7jK9mL2o&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256&nonce=n-0S6_WzA2Mj',
    format: 'uri',
  })
  authorization_url: string;
}

/**
 * What the provider's callback gave the client, sent on as a JSON body, a form body or the query
 * string (djoser clients send `?code=…&state=…` on the POST).
 */
export class SocialLoginDto {
  @TextField({
    max: 4096,
    optional: true,
    default: undefined,
    description: 'The `code` from the callback. Required unless the callback brought an `error`.',
    example: '4/0AVMBsJi…',
  })
  code?: string;

  @TextField({
    max: 128,
    optional: true,
    default: undefined,
    pattern: RANDOM_SECRET_PATTERN,
    description: 'The `state` from the callback (required): single use, valid for 10 minutes.',
    example: 'q3Hk0vVQ2l9zR4sE2n3t8pX1yB6cD0fA5gH7jK9mL2o',
  })
  state?: string;

  @TextField({
    max: 2048,
    optional: true,
    default: undefined,
    format: 'uri',
    description: "Google's `iss` from the callback (RFC 9207), passed on as received; when present it must be Google's issuer.",
    example: 'https://accounts.google.com',
  })
  iss?: string;

  @TextField({
    max: 2048,
    optional: true,
    default: undefined,
    format: 'uri',
    description: 'Optional: the redirect URI of the GET; when sent it must be the one the state was issued for.',
    example: 'https://app.example.com/auth/callback/google',
  })
  redirect_uri?: string;

  @TextField({
    max: 256,
    optional: true,
    default: undefined,
    description: "The callback's `error` (consent denied): spends the state and answers 400 with the provider's reason.",
    example: 'access_denied',
  })
  error?: string;

  @TextField({
    max: 1024,
    optional: true,
    default: undefined,
    description: "The callback's `error_description`, if any.",
    example: 'The user denied access.',
  })
  error_description?: string;
}

export class SocialLoginUserDto {
  @ApiProperty({ ...ID_SCHEMA, example: 42 })
  id: number;

  @ApiProperty({ example: 'ana@acme.example', format: 'email', maxLength: 254 })
  email: string;
}

export class SocialLoginResultDto extends TokenPairDto {
  @ApiProperty({ type: SocialLoginUserDto, description: 'The user signed in (or linked).' })
  user: SocialLoginUserDto;
}
