import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ConnectionsModule } from '../connections/connections.module.js';
import { SignalDelivery } from '../signals/signal-delivery.entity.js';
import { Signal } from '../signals/signal.entity.js';
import { SignalsModule } from '../signals/signals.module.js';
import { SyncsModule } from '../syncs/syncs.module.js';
import { SignalDeliveryService } from './signal-delivery.service.js';
import { SignalEvent } from './signal-event.entity.js';
import { SignalEventsMaintenanceRepository } from './signal-events-maintenance.repository.js';
import { SignalEventsController } from './signal-events.controller.js';
import { SignalEventsRepository } from './signal-events.repository.js';
import { SignalEventsService } from './signal-events.service.js';

/** Signal events and their delivery to Google and Meta (SPEC 10.4). */
@Module({
  imports: [TypeOrmModule.forFeature([SignalEvent, SignalDelivery, Signal]), SignalsModule, ConnectionsModule, SyncsModule],
  controllers: [SignalEventsController],
  providers: [SignalEventsService, SignalEventsRepository, SignalEventsMaintenanceRepository, SignalDeliveryService],
  exports: [SignalEventsService],
})
export class SignalEventsModule {}
