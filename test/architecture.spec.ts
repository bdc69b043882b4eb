import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/**
 * The house's layers, read from the code's own imports (docs/architecture.md, "Layers"): the
 * shared floors never import a feature folder, and no two folders under src/ import each other,
 * directly or round a longer loop. ESLint holds the first rule file by file as code is written
 * (eslint.config.js, LAYERS); this test holds both over the whole tree.
 */
const SRC = resolve(import.meta.dirname, '../src');

/** Folders every feature may build on; they import only each other, downwards. */
const SHARED_FLOORS = ['config', 'database', 'common', 'metrics', 'redis', 'logging', 'openapi'];

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.ts$/.test(entry.name) && !/\.spec\.ts$/.test(entry.name) ? [path] : [];
  });
}

/** The top-level folder of src/ a path is in (`app.ts` and other root files stand for themselves). */
function folderOf(path: string): string {
  return relative(SRC, path).split('/')[0]!;
}

/** folder → the folders its files import (relative imports only: packages are not rooms). */
function folderGraph(): { edges: Map<string, Set<string>>; imports: { from: string; to: string }[] } {
  const edges = new Map<string, Set<string>>();
  const imports: { from: string; to: string }[] = [];
  for (const file of sourceFiles(SRC)) {
    const from = folderOf(file);
    for (const reference of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
      if (!reference.fileName.startsWith('.')) continue;
      const target = resolve(dirname(file), reference.fileName);
      if (!target.startsWith(`${SRC}/`)) continue;
      const to = folderOf(target);
      if (to === from) continue;
      if (!edges.has(from)) edges.set(from, new Set());
      edges.get(from)!.add(to);
      imports.push({ from: relative(SRC, file), to: relative(SRC, target) });
    }
  }
  return { edges, imports };
}

/** Every loop of folders, each as the path that closes it (Tarjan's strongly connected components). */
function folderCycles(edges: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  let counter = 0;
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter++);
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) components.push(component.sort());
    }
  };
  for (const node of edges.keys()) if (!index.has(node)) visit(node);
  return components;
}

describe('the layers of src/', () => {
  const { edges, imports } = folderGraph();

  it('has no two folders that import each other, directly or round a loop', () => {
    expect(folderCycles(edges)).toEqual([]);
  });

  it('never lets a shared floor import a feature folder', () => {
    const upward = imports.filter(({ from, to }) => {
      const source = from.split('/')[0]!;
      const target = to.split('/')[0]!;
      return SHARED_FLOORS.includes(source) && !SHARED_FLOORS.includes(target);
    });
    expect(upward).toEqual([]);
  });

  it('orders the shared floors: each imports only the floors listed before it', () => {
    const upward = imports.filter(({ from, to }) => {
      const source = SHARED_FLOORS.indexOf(from.split('/')[0]!);
      const target = SHARED_FLOORS.indexOf(to.split('/')[0]!);
      return source >= 0 && target >= 0 && target > source;
    });
    expect(upward).toEqual([]);
  });
});
