import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AiModelInstance } from '../ai-model-instances/ai-model-instance.entity.js';
import { Audience } from '../audiences/audience.entity.js';
import { AiModelInstancesModule } from '../ai-model-instances/ai-model-instances.module.js';
import { AudiencesModule } from '../audiences/audiences.module.js';
import { PeopleModule } from '../people/people.module.js';
import { AudienceMember } from './audience-member.entity.js';
import { AudienceMembersController } from './audience-members.controller.js';
import { MembershipMaintenanceRepository } from './membership-maintenance.repository.js';
import { MembershipsRepository } from './memberships.repository.js';
import { MembershipsService } from './memberships.service.js';
import { ModelScore } from './model-score.entity.js';
import { ModelScoresController } from './model-scores.controller.js';
import { ModelScoresRepository } from './model-scores.repository.js';
import { ModelScoresService } from './model-scores.service.js';

/** Audience members and model scores (SPEC 10.2). */
@Module({
  imports: [
    TypeOrmModule.forFeature([AudienceMember, ModelScore, Audience, AiModelInstance]),
    AudiencesModule,
    AiModelInstancesModule,
    PeopleModule,
  ],
  controllers: [AudienceMembersController, ModelScoresController],
  providers: [MembershipsService, MembershipsRepository, MembershipMaintenanceRepository, ModelScoresService, ModelScoresRepository],
  exports: [MembershipsService, MembershipsRepository],
})
export class MembershipsModule {}
