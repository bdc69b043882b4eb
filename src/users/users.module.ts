import { Module } from '@nestjs/common';
import { CustomersService } from '../customers/customers.service.js';
import { PasswordHasher } from './password-hasher.js';
import { UsersController } from './users.controller.js';
import { UsersService } from './users.service.js';

@Module({
  controllers: [UsersController],
  providers: [PasswordHasher, UsersService, CustomersService],
  exports: [PasswordHasher, UsersService, CustomersService],
})
export class UsersModule {}
