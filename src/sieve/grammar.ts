import { readFileSync } from 'node:fs';
import peggy from 'peggy';

let built: peggy.Parser | null = null;

/**
 * The Sieve parser, generated from grammar.peggy on first use (~20 ms, once per process) rather
 * than committed as ~1,500 generated lines: the grammar stays the one source. The build copies
 * grammar.peggy beside the compiled module, so this reads it the same way from src/ and dist/.
 */
export function sieveParser(): peggy.Parser {
  built ??= peggy.generate(readFileSync(new URL('./grammar.peggy', import.meta.url), 'utf8'), { grammarSource: 'grammar.peggy' });
  return built;
}
