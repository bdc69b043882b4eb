import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, type Problem, ProblemError } from '../api/client';

/**
 * One object of the API read again every `intervalMs` until `finished` says it has ended (an
 * import's merge, a sync run): what a page that follows background work shows. `path` null reads
 * nothing. `finished` should be a module-level function, so the reads do not restart on each render.
 *
 * `setValue` puts in what the page learnt itself (the answer to a cancel). A read that was already
 * under way then answers with older state, so its answer is dropped; reading stops once the value
 * put in has ended.
 */
export function usePolled<T>(
  path: string | null,
  finished: (value: T) => boolean,
  intervalMs: number,
): { value: T | null; problem: Problem | null; setValue: (value: T) => void } {
  const [value, setStateValue] = useState<T | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  // Counts the values the page put in; a read answers only if none was put in since it started.
  const putIn = useRef(0);
  const ended = useRef(false);
  useEffect(() => {
    setStateValue(null);
    setProblem(null);
    ended.current = false;
    if (path === null) return;
    let current = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = () => {
      const startedAfter = putIn.current;
      return api<T>('GET', path).then(
        (answer) => {
          if (!current || ended.current) return;
          if (startedAfter === putIn.current) {
            setStateValue(answer);
            if (finished(answer)) return;
          }
          timer = setTimeout(poll, intervalMs);
        },
        (error: unknown) => {
          if (current && error instanceof ProblemError) setProblem(error.problem);
        },
      );
    };
    void poll();
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [path, finished, intervalMs]);
  const setValue = useCallback(
    (next: T) => {
      putIn.current += 1;
      ended.current = finished(next);
      setStateValue(next);
    },
    [finished],
  );
  return { value, problem, setValue };
}
