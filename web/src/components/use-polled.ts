import { useEffect, useState } from 'preact/hooks';
import { api, type Problem, ProblemError } from '../api/client';

/**
 * One object of the API read again every `intervalMs` until `finished` says it has ended (an
 * import's merge, a sync run): what a page that follows background work shows. `path` null reads
 * nothing. `finished` should be a module-level function, so the reads do not restart on each render.
 */
export function usePolled<T>(
  path: string | null,
  finished: (value: T) => boolean,
  intervalMs: number,
): { value: T | null; problem: Problem | null; setValue: (value: T) => void } {
  const [value, setValue] = useState<T | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  useEffect(() => {
    setValue(null);
    setProblem(null);
    if (path === null) return;
    let current = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = () =>
      api<T>('GET', path).then(
        (answer) => {
          if (!current) return;
          setValue(answer);
          if (!finished(answer)) timer = setTimeout(poll, intervalMs);
        },
        (error: unknown) => {
          if (current && error instanceof ProblemError) setProblem(error.problem);
        },
      );
    void poll();
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [path, finished, intervalMs]);
  return { value, problem, setValue };
}
