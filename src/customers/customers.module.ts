import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Customer } from './customer.entity.js';
import { CustomersRepository } from './customers.repository.js';
import { CustomersService } from './customers.service.js';

/** Workspaces. No HTTP routes: they are made with the admin CLI (SPEC section 9). */
@Module({
  imports: [TypeOrmModule.forFeature([Customer])],
  providers: [CustomersRepository, CustomersService],
  exports: [CustomersRepository, CustomersService],
})
export class CustomersModule {}
