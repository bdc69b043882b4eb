import type { ComponentChildren, VNode } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, type Problem, ProblemError } from '../api/client';
import { useSession } from '../session';
import { type Blocker, DeleteDialog } from './delete-dialog';
import { ConfirmDialog, formatDate, Loading, Notice, NotFound, PageHeader, ProblemNotice, StatusBadge } from './feedback';

export interface Transition {
  /** The status value the API takes. */
  to: string | number;
  label: string;
  /** Asks first: archiving is final. */
  confirm?: string;
}

interface Row {
  id: number;
  created_at: string;
  updated_at: string;
}

/**
 * The page of one object: its form, the status changes its state machine allows from where it
 * is, and delete with a confirmation that explains a refusal (409) in place. `id` "new" is the
 * create page. Viewers get the same page without any write control.
 */
export function ResourceEditor<T extends Row>(props: {
  id: string;
  apiPath: string;
  appPath: string;
  noun: string;
  /** The noun for several, where it is not the noun and an s ("people"). */
  plural?: string;
  titleOf: (row: T) => string;
  status?: (row: T) => { value: string; label: string };
  transitions?: (row: T) => Transition[];
  readOnly?: (row: T) => boolean;
  deleteNote?: string;
  /** What may keep the object from being deleted, linked from the dialog after a 409. */
  blockers?: (row: T) => Blocker[];
  form: (args: { row: T | null; readOnly: boolean; onSaved: (row: T) => void }) => VNode;
  /** What the object has come to, shown under its heading (an audience's size). */
  summary?: (row: T) => ComponentChildren;
  /** Shown after the form: what belongs to the object (an audience's members). */
  children?: (row: T) => ComponentChildren;
}) {
  const { canWrite } = useSession();
  const location = useLocation();
  const creating = props.id === 'new';
  // Only a number names an object: anything else ("../connections/7") must not reach an API path.
  const valid = creating || /^[1-9][0-9]{0,15}$/.test(props.id);
  const [row, setRow] = useState<T | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [saved, setSaved] = useState<string | null>(location.query.created ? `The ${props.noun} was created.` : null);
  const [statusProblem, setStatusProblem] = useState<Problem | null>(null);
  const [pending, setPending] = useState<Transition | null>(null);
  const [deleting, setDeleting] = useState(false);
  const [busy, setBusy] = useState(false);
  const [dialogProblem, setDialogProblem] = useState<Problem | null>(null);

  useEffect(() => {
    // The "created" notice is shown once, not again on a reload.
    if (location.query.created) location.route(location.path, true);
  }, []);

  useEffect(() => {
    if (creating || !valid) return;
    setRow(null);
    setProblem(null);
    api<T>('GET', `${props.apiPath}${props.id}/`).then(setRow, (error: unknown) => {
      if (error instanceof ProblemError) setProblem(error.problem);
    });
  }, [props.id]);

  const back = { href: props.appPath, label: `Back to the ${props.plural ?? `${props.noun}s`}` };
  if (!valid) return <NotFound what={`There is no ${props.noun} at this address.`} back={back} />;
  if (creating && !canWrite)
    return <ProblemNotice problem={{ status: 403, code: 'permission_denied', detail: 'Viewers cannot create items.' }} />;
  if (creating)
    return (
      <>
        <PageHeader title={`New ${props.noun}`} />
        {props.form({ row: null, readOnly: false, onSaved: (created) => location.route(`${props.appPath}/${created.id}?created=1`) })}
      </>
    );
  if (problem?.status === 404)
    return <NotFound what={`This ${props.noun} does not exist, or it is not in your workspace: it may have been deleted.`} back={back} />;
  if (problem)
    return (
      <>
        <ProblemNotice problem={problem} />
        <p>
          <a href={back.href}>{back.label}</a>
        </p>
      </>
    );
  if (!row) return <Loading />;

  const readOnly = !canWrite || (props.readOnly?.(row) ?? false);
  const status = props.status?.(row);
  const transitions = canWrite ? (props.transitions?.(row) ?? []) : [];

  async function changeStatus(transition: Transition) {
    setBusy(true);
    setStatusProblem(null);
    setDialogProblem(null);
    try {
      const updated = await api<T>('PATCH', `${props.apiPath}${props.id}/`, { status: transition.to });
      setRow(updated);
      setPending(null);
      setSaved(`Status changed to ${props.status?.(updated).label ?? transition.to}.`);
    } catch (error) {
      if (!(error instanceof ProblemError)) throw error;
      // The state machine's refusal is under errors.status: that sentence is the whole story.
      const reason = error.problem.errors?.status;
      const problem = reason ? { ...error.problem, detail: reason.join(' '), errors: undefined } : error.problem;
      if (pending) setDialogProblem(problem);
      else setStatusProblem(problem);
    } finally {
      setBusy(false);
    }
  }

  return (
    <>
      <PageHeader title={props.titleOf(row)}>{status ? <StatusBadge status={status.value} label={status.label} /> : null}</PageHeader>
      <p class="meta">
        Created {formatDate(row.created_at)} · Updated {formatDate(row.updated_at)} · ID {row.id}
      </p>
      {props.summary?.(row)}
      {saved ? <Notice kind="success">{saved}</Notice> : null}
      {transitions.length > 0 ? (
        <section class="status-actions" aria-label="Status">
          <h2>Status</h2>
          <div class="actions">
            {transitions.map((transition) => (
              <button
                key={transition.to}
                type="button"
                class="button"
                disabled={busy}
                onClick={() => {
                  setDialogProblem(null);
                  if (transition.confirm) setPending(transition);
                  else void changeStatus(transition);
                }}
              >
                {transition.label}
              </button>
            ))}
          </div>
          <ProblemNotice problem={statusProblem} />
        </section>
      ) : null}
      {props.readOnly?.(row) ? <Notice kind="info">This {props.noun} is archived: it is final and can no longer change.</Notice> : null}
      {props.form({
        row,
        readOnly,
        onSaved: (updated) => {
          setRow(updated);
          setSaved('Changes saved.');
        },
      })}
      {props.children?.(row)}
      {canWrite ? (
        <section class="danger-zone" aria-label="Delete">
          <h2>Delete</h2>
          <p>{props.deleteNote ?? `Deleting removes this ${props.noun} for good.`}</p>
          <button type="button" class="button button-danger" onClick={() => setDeleting(true)}>
            Delete {props.noun}
          </button>
        </section>
      ) : null}
      <ConfirmDialog
        open={pending !== null}
        title={pending?.label ?? ''}
        confirmLabel={pending?.label ?? ''}
        danger
        busy={busy}
        problem={dialogProblem}
        onConfirm={() => pending && void changeStatus(pending)}
        onCancel={() => setPending(null)}
      >
        <p>{pending?.confirm}</p>
      </ConfirmDialog>
      <DeleteDialog
        path={deleting ? `${props.apiPath}${props.id}/` : null}
        title={`Delete “${props.titleOf(row)}”?`}
        blockers={props.blockers?.(row)}
        onClose={(deleted) => (deleted ? location.route(`${props.appPath}?deleted=1`) : setDeleting(false))}
      >
        <p>{props.deleteNote ?? `This cannot be undone.`}</p>
      </DeleteDialog>
    </>
  );
}
