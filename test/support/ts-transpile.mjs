// Jest's transform for the TypeScript files the @nestjs/swagger plugin does not rewrite: each file
// on its own (ts.transpileModule with tsconfig.json's options, as ES modules with an inline source
// map), which is far faster than compiling through a program. ts-jest compiles the plugin's files
// (jest.config.js); a second ts-jest entry with other options cannot do this, as ts-jest keeps one
// set of options per Jest project and every entry would get the first one's.
// Type errors are `npm run typecheck`'s to report, as they are for the files ts-jest compiles.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('../../', import.meta.url));
const { config } = ts.readConfigFile(`${root}tsconfig.json`, ts.sys.readFile);
const { options } = ts.parseJsonConfigFileContent(config, ts.sys, root);
const compilerOptions = {
  ...options,
  module: ts.ModuleKind.ESNext,
  isolatedModules: true,
  sourceMap: false,
  inlineSourceMap: true,
  inlineSources: true,
  declaration: false,
  noEmit: false,
  // Without an output folder the map names the file beside it, as stack traces should show it.
  outDir: undefined,
  rootDir: undefined,
};
const version = createHash('sha1')
  .update(ts.version)
  .update(JSON.stringify(compilerOptions))
  .update(readFileSync(fileURLToPath(import.meta.url)))
  .digest('hex');

const transformer = {
  getCacheKey(sourceText, sourcePath) {
    return createHash('sha1').update(`${version}\0${sourcePath}\0${sourceText}`).digest('hex');
  },
  process(sourceText, sourcePath) {
    const { outputText } = ts.transpileModule(sourceText, { compilerOptions, fileName: sourcePath });
    return { code: outputText };
  },
};

export default transformer;
