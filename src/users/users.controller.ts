import { Controller, Get, Req } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { Personal } from '../common/access/access.decorators.js';
import { ApiError } from '../common/errors/api-error.js';
import { USER_ROLES } from '../common/access/user-role.js';
import { UsersService } from './users.service.js';
import { ID_SCHEMA } from '../common/validation/fields.js';

export class CurrentUserDto {
  @ApiProperty({ ...ID_SCHEMA, example: 7 })
  id: number;

  @ApiProperty({ example: 'ana@acme.example', format: 'email', maxLength: 254 })
  email: string;

  @ApiProperty({ ...ID_SCHEMA, example: 1, description: 'The workspace (customer) id.' })
  customer: number;

  @ApiProperty({ enum: USER_ROLES, example: 'editor', description: '`viewer` reads only; `admin` and `editor` also write.' })
  role: string;

  @ApiProperty({ example: '2026-11-21T10:00:00.000Z', format: 'date-time' })
  date_joined: string;
}

@ApiTags('users')
@Controller('api/v1/users')
export class UsersController {
  constructor(private readonly users: UsersService) {}

  @Get('me')
  @Personal()
  @ApiOperation({ summary: 'The current user', description: 'The user of the JWT. An API key is not a user: 403.' })
  @ApiOkResponse({ type: CurrentUserDto, description: 'The signed-in user.' })
  async me(@Req() request: FastifyRequest): Promise<CurrentUserDto> {
    const identity = request.identity;
    if (identity?.kind !== 'user') throw ApiError.permissionDenied();
    const user = await this.users.findById(identity.userId);
    if (!user) throw ApiError.notFound();
    return { id: user.id, email: user.email, customer: user.customerId, role: user.role, date_joined: user.dateJoined.toISOString() };
  }
}
