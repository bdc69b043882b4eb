import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { PeopleController } from './people.controller.js';
import { PeopleRepository } from './people.repository.js';
import { PeopleService } from './people.service.js';
import { PersonIdentifier } from './person-identifier.entity.js';
import { Person } from './person.entity.js';

@Module({
  imports: [TypeOrmModule.forFeature([Person, PersonIdentifier])],
  controllers: [PeopleController],
  providers: [PeopleService, PeopleRepository],
  exports: [PeopleService, PeopleRepository],
})
export class PeopleModule {}
