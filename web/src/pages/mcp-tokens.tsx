import { useEffect, useState } from 'preact/hooks';
import { api, type Problem, ProblemError } from '../api/client';
import type { CreatedMcpToken, McpToken, Page } from '../api/types';
import { DeleteDialog } from '../components/delete-dialog';
import { EmptyState, formatDate, Loading, Notice, PageHeader, ProblemNotice } from '../components/feedback';
import { NumberField, TextField } from '../components/fields';
import { FormProblem } from '../components/form-problem';
import { useForm } from '../components/form';

const API = '/api/v1/mcp-tokens/';

/** The MCP client configuration for a new token (the same shape as the README's). */
export function clientConfiguration(token: string): string {
  const server = { type: 'streamable-http', url: `${window.location.origin}/mcp`, headers: { Authorization: `Bearer ${token}` } };
  return JSON.stringify({ mcpServers: { 'audience-platform': server } }, null, 2);
}

export function McpTokensPage() {
  const [tokens, setTokens] = useState<McpToken[] | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [created, setCreated] = useState<CreatedMcpToken | null>(null);
  const [revoking, setRevoking] = useState<McpToken | null>(null);
  const [revoked, setRevoked] = useState<string | null>(null);

  const load = () =>
    api<Page<McpToken>>('GET', `${API}?page_size=100`).then(
      (page) => setTokens(page.results),
      (error: unknown) => error instanceof ProblemError && setProblem(error.problem),
    );
  useEffect(() => void load(), []);

  return (
    <>
      <PageHeader
        title="MCP tokens"
        description="Personal tokens for AI agents on the Model Context Protocol. An agent acts as you: same workspace, same role."
      />
      <CreateTokenForm
        onCreated={(token) => {
          setCreated(token);
          setRevoked(null);
          void load();
        }}
      />
      {created ? <NewToken token={created} onDismiss={() => setCreated(null)} /> : null}
      {revoked ? <Notice kind="success">{revoked}</Notice> : null}
      <ProblemNotice problem={problem} />
      <section aria-labelledby="tokens-heading">
        <h2 id="tokens-heading">Your tokens</h2>
        {tokens === null && !problem ? <Loading /> : null}
        {tokens?.length === 0 ? (
          <EmptyState title="No tokens yet">
            <p>Create one above and paste its configuration into your MCP client.</p>
          </EmptyState>
        ) : null}
        {tokens && tokens.length > 0 ? (
          <div class="table-wrap">
            <table>
              <caption class="visually-hidden">Your MCP tokens</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Prefix</th>
                  <th scope="col">Created</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {tokens.map((token) => (
                  <tr key={token.id}>
                    <td>{token.name}</td>
                    <td>
                      <code>{token.prefix}</code>
                    </td>
                    <td>{formatDate(token.created_at)}</td>
                    <td>{formatDate(token.expires_at)}</td>
                    <td>{token.last_used_at ? formatDate(token.last_used_at) : 'Never'}</td>
                    <td>
                      <button type="button" class="button button-danger" onClick={() => setRevoking(token)}>
                        Revoke<span class="visually-hidden"> {token.name}</span>
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
      </section>
      <DeleteDialog
        path={revoking ? `${API}${revoking.id}/` : null}
        title={`Revoke “${revoking?.name ?? ''}”?`}
        confirmLabel="Revoke"
        onClose={(done) => {
          if (done && revoking) {
            setRevoked(`Token “${revoking.name}” revoked: agents using it are signed out.`);
            if (created?.id === revoking.id) setCreated(null);
            void load();
          }
          setRevoking(null);
        }}
      >
        <p>Agents using this token stop working at once. This cannot be undone.</p>
      </DeleteDialog>
    </>
  );
}

function CreateTokenForm(props: { onCreated: (token: CreatedMcpToken) => void }) {
  const form = useForm({ name: '', expires_in_days: '90' });
  const create = () =>
    form.submit(async () => {
      const body = {
        name: form.values.name,
        expires_in_days: form.values.expires_in_days === '' ? undefined : Number(form.values.expires_in_days),
      };
      props.onCreated(await api<CreatedMcpToken>('POST', API, body));
      form.setValues({ name: '', expires_in_days: '90' });
    });
  return (
    <form
      class="form form-inline"
      noValidate
      aria-label="New MCP token"
      onSubmit={(event) => {
        event.preventDefault();
        void create();
      }}
    >
      <FormProblem form={form} />
      <div class="field-row">
        <TextField label="Token name" {...form.bind('name')} required maxLength={255} hint="Which agent or machine uses it." />
        <NumberField label="Expires in (days)" {...form.bind('expires_in_days')} min={1} max={365} step={1} hint="1 to 365; default 90." />
      </div>
      <div class="actions">
        <button type="submit" class="button button-primary" disabled={form.busy}>
          {form.busy ? 'Creating…' : 'Create token'}
        </button>
      </div>
    </form>
  );
}

/** The secret, once: with a copy button for the ready client configuration. */
function NewToken(props: { token: CreatedMcpToken; onDismiss: () => void }) {
  const [copied, setCopied] = useState<string | null>(null);
  const configuration = clientConfiguration(props.token.token);
  const copy = async (text: string, what: string) => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied(`${what} copied to the clipboard.`);
    } catch {
      setCopied('Copying is not allowed here: select the text and copy it yourself.');
    }
  };
  return (
    <section class="panel panel-highlight" aria-labelledby="new-token-heading">
      <h2 id="new-token-heading">Token “{props.token.name}” created</h2>
      <p>
        <strong>Copy it now: it is shown only this once.</strong> Paste the configuration into your MCP client’s settings.
      </p>
      <label for="new-token-value">Token</label>
      <div class="copy-row">
        <input id="new-token-value" readOnly value={props.token.token} class="code" />
        <button type="button" class="button" onClick={() => void copy(props.token.token ?? '', 'Token')}>
          Copy token
        </button>
      </div>
      <label for="new-token-config">Client configuration</label>
      <textarea id="new-token-config" readOnly class="code" rows={9} value={configuration} />
      <div class="actions">
        <button type="button" class="button button-primary" onClick={() => void copy(configuration, 'Configuration')}>
          Copy configuration
        </button>
        <button type="button" class="button" onClick={props.onDismiss}>
          Done
        </button>
      </div>
      {copied ? (
        <p role="status" class="hint">
          {copied}
        </p>
      ) : null}
    </section>
  );
}
