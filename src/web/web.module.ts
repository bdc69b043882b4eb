import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { ConnectionsModule } from '../connections/connections.module.js';
import { WebSessionController } from './web-session.controller.js';

/** The web interface's server side: its session endpoints (the pages themselves are static files, web-app.ts). */
@Module({ imports: [AuthModule, ConnectionsModule], controllers: [WebSessionController] })
export class WebModule {}
