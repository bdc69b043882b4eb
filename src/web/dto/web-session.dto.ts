import { ApiProperty } from '@nestjs/swagger';
import { JWT_PATTERN } from '../../auth/dto/jwt.dto.js';
import { SOCIAL_PROVIDERS } from '../../auth/social/social-providers.js';
import { AD_PLATFORM_SLUGS } from '../../connections/oauth/ad-platform-clients.js';

/** What the web interface keeps in memory: an access token, never the refresh token (that stays in the cookie). */
export class WebSessionDto {
  @ApiProperty({
    maxLength: 4096,
    pattern: JWT_PATTERN,
    example: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI3IiwidHlwZSI6ImFjY2VzcyJ9.c2lnbmF0dXJl',
    description: 'Access token (JWT) for `Authorization: Bearer …`; kept in memory by the web interface.',
  })
  access: string;

  @ApiProperty({ type: 'integer', minimum: 10, maximum: 86400, example: 900, description: 'Seconds until the access token expires.' })
  expires_in: number;
}

/** Which sign-in and connect buttons the web interface shows. */
export class WebConfigDto {
  @ApiProperty({
    enum: SOCIAL_PROVIDERS,
    isArray: true,
    maxItems: SOCIAL_PROVIDERS.length,
    example: ['google-oauth2'],
    description: 'Configured social-login providers.',
  })
  social_providers: string[];

  @ApiProperty({
    enum: AD_PLATFORM_SLUGS,
    isArray: true,
    maxItems: AD_PLATFORM_SLUGS.length,
    example: ['google-ads', 'meta-ads'],
    description: 'Ad platforms whose OAuth app is configured (`/oauth/connections/{platform}/start`).',
  })
  ad_platforms: string[];
}
