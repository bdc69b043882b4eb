import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Tenant } from '../common/tenancy/tenant.js';
import { TenantContext } from '../common/tenancy/tenant-context.js';
import { ConnectionsRepository } from '../connections/connections.repository.js';
import { registerExternalConnection } from '../connections/external-connections.js';
import { CustomersService } from '../customers/customers.service.js';
import type { DemoCredentials } from './demo-workspace.js';

interface Created {
  id: number;
}

/**
 * A little realistic content for the demo workspace, so a newcomer's first list is not empty: a
 * registered Google Ads connection, three model instances, four audiences and three signals (one
 * active on the connection). Written through the API itself, signed in as the demo admin, so it
 * obeys every rule a client's data does; the connection, which only the OAuth flow or the
 * operator can make, is registered as `audience-admin connection create` would.
 */
export async function seedDemoData(app: NestFastifyApplication, demo: DemoCredentials): Promise<void> {
  // Over real HTTP to the listening app (Fastify's inject would load an ESM-only cookie parser that Jest on Node 20 cannot).
  const base = (await app.getUrl()).replace('[::]', '127.0.0.1').replace('0.0.0.0', '127.0.0.1');
  const request = async (method: 'POST' | 'PATCH', path: string, payload: object, access?: string) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...(access !== undefined && { authorization: `Bearer ${access}` }) },
      body: JSON.stringify(payload),
    });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`demo data: ${method} ${path} answered ${response.status}: ${text.slice(0, 300)}`);
    return JSON.parse(text) as Created & { access?: string };
  };
  const { access } = await request('POST', '/api/v1/jwt/create/', { email: demo.email, password: demo.password });
  const call = (method: 'POST' | 'PATCH', path: string, payload: object) => request(method, path, payload, access);

  const customers = app.get(CustomersService);
  const connection = await app.get(TenantContext).run(Tenant.forOperator(demo.customer), () =>
    registerExternalConnection(app.get(ConnectionsRepository), (id) => customers.exists(id), {
      customerId: demo.customer,
      platform: 'google_ads',
      externalAccountId: '1234567890',
      accountName: 'Demo Shoes — EU',
    }),
  );

  const model = (name: string, model_type: string, base_model: string, parameters: object) =>
    call('POST', '/api/v1/ai-model-instances/', { name, model_type, base_model, parameters });
  const propensity = await model('Purchase propensity (30 days)', 'propensity', 'gbm-v3', { horizon_days: 30, learning_rate: 0.05 });
  const ltv = await model('Customer lifetime value', 'lifetime_value', 'bg-nbd', { horizon_days: 365 });
  await model('Churn risk', 'churn', 'gbm-v3', { inactivity_days: 60 });
  for (const id of [propensity.id, ltv.id]) {
    await call('PATCH', `/api/v1/ai-model-instances/${id}/`, { status: 'training' });
    await call('PATCH', `/api/v1/ai-model-instances/${id}/`, { status: 'ready', metrics: { auc: 0.81 } });
  }

  const likelyBuyers = await call('POST', '/api/v1/audiences/', {
    name: 'Likely buyers',
    description: 'Visitors the propensity model scores above 0.7.',
    source_type: 'model',
    model_instance: propensity.id,
    min_score: 0.7,
    connections: [connection.id],
  });
  await call('PATCH', `/api/v1/audiences/${likelyBuyers.id}/`, { status: 'active' });
  await call('POST', '/api/v1/audiences/', {
    name: 'Cart abandoners (7 days)',
    source_type: 'rules',
    rules: { all: [{ event: 'add_to_cart', within_days: 7 }, { not: { event: 'purchase', within_days: 7 } }] },
  });
  await call('POST', '/api/v1/audiences/', {
    name: 'Newsletter subscribers',
    source_type: 'upload',
    description: 'CRM export, hashed emails.',
  });
  await call('POST', '/api/v1/audiences/', { name: 'High-value customers', source_type: 'model', model_instance: ltv.id, min_score: 0.9 });

  const purchases = await call('POST', '/api/v1/signals/', {
    name: 'Purchases',
    signal_type: 'conversion',
    connection: connection.id,
    config: { conversion_action: 'purchase', value_field: 'order_total' },
  });
  await call('PATCH', `/api/v1/signals/${purchases.id}/`, { status: 1 });
  await call('POST', '/api/v1/signals/', {
    name: 'Predicted order value',
    signal_type: 'value',
    model_instance: ltv.id,
    audience: likelyBuyers.id,
    connection: connection.id,
  });
  await call('POST', '/api/v1/signals/', { name: 'Propensity score', signal_type: 'score', model_instance: propensity.id });
}
