/**
 * The @nestjs/swagger CLI plugin as a ts-jest AST transformer, so the document the tests generate
 * is the one `nest build` produces (nest-cli.json holds the options; jest.config.js passes them).
 * ts-jest wants `name`, `version` and `factory(compiler, options)`; the plugin exports `before`.
 */
import { before } from '@nestjs/swagger/plugin';

export const name = 'nestjs-swagger-plugin';
export const version = 1;

export function factory(compiler, options) {
  // The plugin reads types across files (a DTO's imported enum union, a controller's return type),
  // so it needs the program that holds the file being compiled: ts-jest's language service has it;
  // `compiler.program` is the one from its start-up, before any file was added.
  const program = compiler._languageService?.getProgram() ?? compiler.program;
  const transformer = before(options, program);
  return (context) => {
    const visit = transformer(context);
    return (sourceFile) => {
      if (program.getSourceFile(sourceFile.fileName) !== sourceFile)
        throw new Error(`@nestjs/swagger plugin: ts-jest compiled ${sourceFile.fileName} outside the program the plugin reads types from`);
      return visit(sourceFile);
    };
  };
}
