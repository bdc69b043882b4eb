import { ApiProperty } from '@nestjs/swagger';
import { TextField } from '../../../common/validation/fields.js';

/** A path under /app of characters a path may hold (RFC 3986 `pchar`); connection-flow.service.ts also refuses dot segments. */
export const RETURN_TO_PATTERN = "^/app(/[A-Za-z0-9._~!$&'()*+,;=:@%-]*)*$";

export class StartConnectionFlowDto {
  @TextField({
    max: 512,
    optional: true,
    default: undefined,
    pattern: RETURN_TO_PATTERN,
    description:
      'The page of the web interface the browser lands on afterwards (a path under `/app`, never an absolute URL), with ' +
      '`connected=N` or `error=<code>` and `platform` added to its query. Default `/app/connections`.',
    example: '/app/connections',
  })
  return_to?: string;
}

export class ConnectionFlowStartedDto {
  @ApiProperty({
    format: 'uri',
    maxLength: 4096,
    description: 'Send the browser here. The provider sends it back to `/oauth/connections/{platform}/callback`.',
    example:
      'https://accounts.google.com/o/oauth2/v2/auth?client_id=1234.apps.googleusercontent.com&scope=https%3A%2F%2Fwww.googleapis.com%2Fauth%2Fadwords&access_type=offline&state=3xk2q0aLr7VbN1cT9wE4yH6uJ8mP5sD2fG0hK7lZ3xC&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256',
  })
  authorization_url: string;
}
