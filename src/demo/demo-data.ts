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
 * active on the connection), and DEMO_PEOPLE generated people with scores, so every audience has
 * members and a real size. Written through the API itself, signed in as the demo admin, so it
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
  const abandoners = await call('POST', '/api/v1/audiences/', {
    name: 'Cart abandoners (7 days)',
    description: 'Left a cart and have not ordered for a week, with consent to personalised ads.',
    source_type: 'rules',
    rules: {
      all: [
        { trait: 'cart_abandoned', op: 'eq', value: true },
        { trait: 'days_since_order', op: 'gt', value: 7 },
        { consent: 'ad_personalization', op: 'neq', value: 'denied' },
      ],
    },
  });
  await call('PATCH', `/api/v1/audiences/${abandoners.id}/`, { status: 'active' });
  const subscribers = await call('POST', '/api/v1/audiences/', {
    name: 'Newsletter subscribers',
    source_type: 'upload',
    description: 'CRM export, hashed emails.',
  });
  await call('POST', '/api/v1/audiences/', { name: 'High-value customers', source_type: 'model', model_instance: ltv.id, min_score: 0.9 });

  // People, in batches as a CRM sync would send them; then the models' scores and the newsletter
  // list. The audiences compute their members in the background (jobs), so the first look shows sizes.
  const people = demoPeople(DEMO_PEOPLE);
  for (let start = 0; start < people.length; start += 1000)
    await call('POST', '/api/v1/people/batch/', { people: people.slice(start, start + 1000) });
  const random = seeded(42);
  for (const id of [propensity.id, ltv.id]) {
    const scores = people.map((person) => ({ external_id: person.external_id, score: Math.round(random() ** 1.5 * 1000) / 1000 }));
    await call('POST', `/api/v1/ai-model-instances/${id}/scores/`, { scores });
  }
  const newsletter = people.filter((_, index) => index % 4 === 0).map((person) => ({ external_id: person.external_id }));
  for (let start = 0; start < newsletter.length; start += 1000)
    await call('POST', `/api/v1/audiences/${subscribers.id}/members/`, { action: 'add', people: newsletter.slice(start, start + 1000) });

  const purchases = await call('POST', '/api/v1/signals/', {
    name: 'Purchases',
    signal_type: 'conversion',
    connection: connection.id,
    config: { conversion_action_id: '987654321' },
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

/** People of the demo workspace: enough for sizes that look real, few enough for a quick first start. */
export const DEMO_PEOPLE = 3000;
const PLANS = ['free', 'free', 'pro', 'pro', 'team'];
const COUNTRIES = ['DE', 'FR', 'GB', 'US', 'NL'];
const CONSENT = ['granted', 'granted', 'denied', 'unspecified'];

/**
 * Generated people, the same on every first start: emails on the reserved example domains
 * (RFC 2606), phones in the UK's range for fiction (+44 7700 900000–900999, Ofcom), so no real
 * person is ever named; traits an advertiser would have (plan, country, lifetime value, orders).
 */
function demoPeople(
  count: number,
): { external_id: string; identifiers: Record<string, string>; traits: Record<string, unknown>; consent: Record<string, string> }[] {
  const random = seeded(7);
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  return Array.from({ length: count }, (_, index) => {
    const number = String(index + 1).padStart(5, '0');
    const identifiers: Record<string, string> = { email: `customer${number}@example.${pick(['com', 'org', 'net'])}` };
    if (index < 1000) identifiers.phone = `+447700900${String(index).padStart(3, '0')}`;
    const orders = Math.floor(random() ** 2 * 20);
    return {
      external_id: `demo-${number}`,
      identifiers: { ...identifiers, country_code: pick(COUNTRIES) },
      traits: {
        plan: pick(PLANS),
        lifetime_value: Math.round(orders * (20 + random() * 80) * 100) / 100,
        orders,
        days_since_order: Math.floor(random() * 90),
        cart_abandoned: random() < 0.3,
      },
      consent: { ad_user_data: pick(CONSENT), ad_personalization: pick(CONSENT) },
    };
  });
}

/** A small deterministic generator (mulberry32), so the demo is the same on every machine. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
