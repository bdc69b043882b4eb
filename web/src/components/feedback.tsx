import type { ComponentChildren } from 'preact';
import { useEffect, useId, useLayoutEffect, useRef } from 'preact/hooks';
import type { Problem } from '../api/client';

/** A message above a form or list: errors are announced at once (role=alert), the rest politely. */
export function Notice(props: { kind: 'error' | 'success' | 'info'; children: ComponentChildren }) {
  return (
    <div class={`notice notice-${props.kind}`} role={props.kind === 'error' ? 'alert' : 'status'}>
      {props.children}
    </div>
  );
}

const FRIENDLY: Record<number, string> = {
  0: 'The service could not be reached.',
  403: 'You do not have permission to do this.',
  404: 'This item no longer exists, or it is not in your workspace.',
  409: 'This cannot be done right now.',
  429: 'Too many attempts. Wait a moment and try again.',
  503: 'The service is temporarily unavailable. Try again shortly.',
};

/** A problem from the API, in words, with its request id for a support ticket. */
export function ProblemNotice(props: { problem: Problem | null; fieldsShown?: boolean }) {
  const { problem } = props;
  if (!problem) return null;
  const heading = FRIENDLY[problem.status];
  const others = Object.entries(problem.errors ?? {}).filter(([field]) => !props.fieldsShown || field === 'non_field_errors');
  return (
    <Notice kind="error">
      {heading && heading !== problem.detail ? <strong>{heading} </strong> : null}
      <span>{problem.detail}</span>
      {others.length > 0 ? (
        <ul>
          {others.map(([field, messages]) => (
            <li key={field}>{field === 'non_field_errors' ? messages.join(' ') : `${field}: ${messages.join(' ')}`}</li>
          ))}
        </ul>
      ) : null}
      {problem.request_id ? <small class="request-id">Request id {problem.request_id}</small> : null}
    </Notice>
  );
}

export function Loading(props: { label?: string }) {
  return (
    <p class="loading" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" />
      {props.label ?? 'Loading…'}
    </p>
  );
}

export function EmptyState(props: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <h2>{props.title}</h2>
      {props.children}
    </div>
  );
}

/**
 * A modal question (the native <dialog>: focus is trapped and Escape cancels). `busy` disables the
 * buttons while the action runs; a problem from it is shown inside, so a 409 is explained in place.
 */
export function ConfirmDialog(props: {
  open: boolean;
  title: string;
  confirmLabel: string;
  danger?: boolean;
  busy?: boolean;
  problem?: Problem | null;
  /** Shown under the problem: what to do about it (the links to what keeps a delete from happening). */
  after?: ComponentChildren;
  onConfirm: () => void;
  onCancel: () => void;
  children: ComponentChildren;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    if (props.open && !element.open) element.showModal();
    if (!props.open && element.open) element.close();
  }, [props.open]);
  return (
    <dialog
      ref={dialog}
      class="dialog"
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        props.onCancel();
      }}
    >
      <h2 id={titleId}>{props.title}</h2>
      {/* A form, so Enter in a field of the dialog confirms. */}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (!props.busy) props.onConfirm();
        }}
      >
        <div class="dialog-body">{props.children}</div>
        <ProblemNotice problem={props.problem ?? null} />
        {props.after}
        <div class="actions">
          <button type="button" class="button" onClick={props.onCancel} disabled={props.busy}>
            Cancel
          </button>
          <button type="submit" class={`button ${props.danger ? 'button-danger' : 'button-primary'}`} disabled={props.busy}>
            {props.busy ? 'Working…' : props.confirmLabel}
          </button>
        </div>
      </form>
    </dialog>
  );
}

export function PageHeader(props: { title: string; description?: string; children?: ComponentChildren }) {
  // In the same commit as the heading, not after the paint: the tab's title and the page's
  // heading never disagree, for a screen reader or a test that reads both.
  useLayoutEffect(() => {
    document.title = `${props.title} · Audience and Signal Platform`;
  }, [props.title]);
  return (
    <header class="page-header">
      <div>
        <h1>{props.title}</h1>
        {props.description ? <p class="lead">{props.description}</p> : null}
      </div>
      {props.children ? <div class="page-actions">{props.children}</div> : null}
    </header>
  );
}

export function formatDate(value: string | null): string {
  if (!value) return '—';
  return new Date(value).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

export function StatusBadge(props: { status: string; label?: string }) {
  return <span class={`badge badge-${props.status}`}>{props.label ?? props.status.replace(/_/g, ' ')}</span>;
}

/**
 * A page that is not there (an unknown address, an id that is not a number, an object the API
 * does not find), with the ways back: to the list it belongs to, when there is one, and to the start.
 */
export function NotFound(props: { what?: string; back?: { href: string; label: string } }) {
  return (
    <>
      <PageHeader title="Page not found" />
      <div class="empty">
        <p>{props.what ?? 'There is no page at this address.'}</p>
        <ul class="link-list">
          {props.back ? (
            <li>
              <a href={props.back.href}>{props.back.label}</a>
            </li>
          ) : null}
          <li>
            <a href="/app/audiences">Go to the start page (audiences)</a>
          </li>
        </ul>
      </div>
    </>
  );
}
