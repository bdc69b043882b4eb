import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CustomersModule } from '../customers/customers.module.js';
import { PasswordHasher } from './password-hasher.js';
import { UsersController } from './users.controller.js';
import { UsersRepository } from './users.repository.js';
import { UsersService } from './users.service.js';
import { User } from './user.entity.js';

@Module({
  imports: [TypeOrmModule.forFeature([User]), CustomersModule],
  controllers: [UsersController],
  providers: [PasswordHasher, UsersRepository, UsersService],
  exports: [PasswordHasher, UsersRepository, UsersService],
})
export class UsersModule {}
