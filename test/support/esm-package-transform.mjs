// Jest's transform for content-disposition 3, an ESM-only package that @fastify/static (CommonJS)
// requires. Node loads it natively; Jest's CommonJS loader can only from Node 24.9 on (its native
// require(esm)). Before that, the package is compiled to CommonJS here; from then on it is passed
// through as the ESM it is (compiled, Jest would load CommonJS as ESM).
// Deciding here rather than in jest.config.js keeps Jest's configuration the same on every Node,
// and so its transform cache: CI's run on Node 24 reuses what the run on Node 20 compiled.
import { createHash } from 'node:crypto';
import ts from 'typescript';

const [major, minor] = process.versions.node.split('.').map(Number);
const nativeRequireEsm = major > 24 || (major === 24 && minor >= 9);
const mode = nativeRequireEsm ? 'esm' : 'commonjs';

const transformer = {
  getCacheKey(sourceText, sourcePath) {
    return createHash('sha1').update(`${mode}\0${sourcePath}\0${sourceText}`).digest('hex');
  },
  process(sourceText, sourcePath) {
    if (nativeRequireEsm) return { code: sourceText };
    const { outputText } = ts.transpileModule(sourceText, {
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
      fileName: sourcePath,
    });
    return { code: outputText };
  },
};

export default transformer;
