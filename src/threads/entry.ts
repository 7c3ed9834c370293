/**
 * How to start a worker thread on one of our modules. Built (dist/): the compiled .js file beside
 * the caller. From the TypeScript sources (tsx: development and tests): a small evaluated bootstrap
 * that registers tsx inside the thread before importing the .ts module, because a new thread does
 * not inherit the loader hooks of the thread that started it.
 */
export function threadEntry(callerUrl: string, moduleBase: string): { script: string | URL; evaluated: boolean } {
  if (!callerUrl.endsWith('.ts')) return { script: new URL(`./${moduleBase}.js`, callerUrl), evaluated: false };
  const api = import.meta.resolve('tsx/esm/api');
  const target = new URL(`./${moduleBase}.ts`, callerUrl).href;
  return { script: `import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(target)}); });`, evaluated: true };
}
