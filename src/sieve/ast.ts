// The syntax tree grammar.peggy produces (RFC 5228 section 8), and the validated call form the interpreter runs.
export interface Position { line: number; column: number }
export interface StringNode extends Position { value: string; multiline?: boolean }
export interface ListArgument extends Position { kind: 'list'; items: StringNode[]; single?: boolean }
export interface NumberArgument extends Position { kind: 'number'; value: number; text: string }
export interface TagArgument extends Position { kind: 'tag'; name: string }
export type Argument = ListArgument | NumberArgument | TagArgument;

/** testList: the tests were written as a parenthesised list (only allof/anyof take one). */
export interface TestNode extends Position { type: 'test'; name: string; args: Argument[]; tests: TestNode[]; testList: boolean }
export interface CommandNode extends Position {
  type: 'command'; name: string; args: Argument[]; tests: TestNode[]; testList: boolean; block: CommandNode[] | null;
}

/** A command or test after validation: tags by name (value or null for a flag tag), positional arguments in order. */
export interface Call extends Position {
  name: string;
  tags: Map<string, Argument | null>;
  positional: Argument[];
  tests: Call[];
  block: Call[] | null;
}

/** An error with the 1-based position it is reported at. */
export class SieveFault extends Error {
  constructor(readonly line: number, readonly column: number, message: string) { super(message); }
}
