// Runs a CommonJS bundle of dist/ with V8's code cache: the bytecode V8 compiled for it on a
// training run at build time (scripts/build.mjs), so a CLI process or a worker thread does not
// parse and compile ~300 KB of JavaScript again at each start (~15 ms of every `score` start-up,
// and again in its worker). Node 22 has this built in (module.enableCompileCache); Node 20, the
// Node we support, does not.
//
// The cache is only trusted for the exact bundle it was made from: the build ends each bundle with
// a line `//# code-cache-key=K` (a hash of the rest of its text) and writes K at the head of the
// cache; a bundle without the line (an esbuild --watch rebuild) or with another key runs without
// the cache. V8 itself rejects a cache from another V8 version or other flags (the bundle then
// compiles as usual). Nothing is written at run time, unless CONSENSUS_LENS_WRITE_CODE_CACHE=1
// (the build's training run).
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import Module from 'node:module';
import { dirname } from 'node:path';
import { Script } from 'node:vm';
import { isMainThread, parentPort } from 'node:worker_threads';

const KEY = /\/\/# code-cache-key=([0-9a-f]{16})\s*$/;

/** The key of a bundle's text (its last line), or null. */
export function codeCacheKey(source: string): string | null {
  return KEY.exec(source.slice(-64))?.[1] ?? null;
}

/** Runs the bundle `file` as a CommonJS module; returns its exports and whether the cache was used. */
export function runBundle(file: string): { exports: unknown; cacheUsed: boolean } {
  const source = readFileSync(file, 'utf8');
  const key = codeCacheKey(source);
  const cacheFile = `${file}.cache`;
  let cachedData: Buffer | undefined;
  if (key) {
    try {
      const c = readFileSync(cacheFile);
      if (c.toString('latin1', 0, 16) === key) cachedData = c.subarray(16);
    } catch {
      // No cache (not built yet, or removed): compile as usual.
    }
  }
  const script = new Script(Module.wrap(source), { filename: file, cachedData });
  const m = new Module(file, module);
  m.filename = file;
  m.paths = (Module as unknown as { _nodeModulePaths(dir: string): string[] })._nodeModulePaths(dirname(file));
  if (key && process.env.CONSENSUS_LENS_WRITE_CODE_CACHE === '1') {
    // After the training run's work, so the functions it compiled are in the cache too. A worker
    // thread is terminated, never exits by itself: it writes after each request.
    // Written beside and renamed: a worker terminated mid-write leaves the last whole cache.
    const write = () => {
      writeFileSync(`${cacheFile}.tmp`, Buffer.concat([Buffer.from(key, 'latin1'), script.createCachedData()]));
      renameSync(`${cacheFile}.tmp`, cacheFile);
    };
    if (isMainThread) process.on('exit', write);
    else parentPort?.on('message', () => setImmediate(write));
  }
  const wrapper = script.runInThisContext() as (exports: unknown, require: NodeJS.Require, module: Module, filename: string, dirname: string) => void;
  const req = ((id: string) => m.require(id)) as NodeJS.Require;
  wrapper.call(m.exports, m.exports, req, m, file, dirname(file));
  return { exports: m.exports, cacheUsed: cachedData !== undefined && !script.cachedDataRejected };
}
