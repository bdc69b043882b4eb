import type { ComponentChildren } from 'preact';
import { api } from '../api/client';
import { ConfirmDialog } from './feedback';
import { useForm } from './form';

/**
 * Asks, then sends `DELETE path` (`path` null: the dialog is closed). A refusal (a 409, a 403) is
 * shown inside the dialog, which stays open; `onClose(true)` once the API has deleted.
 */
export function DeleteDialog(props: {
  path: string | null;
  title: string;
  confirmLabel?: string;
  onClose: (deleted: boolean) => void;
  children: ComponentChildren;
}) {
  const action = useForm({});
  const confirm = () =>
    action.submit(async () => {
      if (props.path === null) return;
      await api('DELETE', props.path);
      props.onClose(true);
    });
  return (
    <ConfirmDialog
      open={props.path !== null}
      title={props.title}
      confirmLabel={props.confirmLabel ?? 'Delete'}
      danger
      busy={action.busy}
      problem={action.problem}
      onConfirm={() => void confirm()}
      onCancel={() => {
        action.setProblem(null);
        props.onClose(false);
      }}
    >
      {props.children}
    </ConfirmDialog>
  );
}
