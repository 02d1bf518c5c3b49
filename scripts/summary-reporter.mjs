// A node:test reporter for `npm test`: one line per failed test (with its error) and per skipped
// test (with its reason), nothing for the passing ones, and a summary at the end (files, tests, time). The full TAP goes to a log file
// beside it (scripts/run-tests.mjs), for CI.
import { inspect } from 'node:util';

export default async function* summary(source) {
  const files = new Set();
  let pass = 0;
  let fail = 0;
  let skip = 0;
  let todo = 0;
  for await (const ev of source) {
    const d = ev.data ?? {};
    if (d.file) files.add(d.file);
    // nested subtests count within their test
    if ((ev.type === 'test:pass' || ev.type === 'test:fail') && d.nesting !== 0) continue;
    if (ev.type === 'test:pass') {
      if (d.skip) {
        skip++;
        // a skipped test says why (a missing tool: test/tools.ts), so a skip is never silent
        yield `skipped ${d.name}${d.file ? ` (${d.file})` : ''}: ${typeof d.skip === 'string' ? d.skip : 'no reason given'}\n`;
      }
      else if (d.todo) todo++;
      else pass++;
    } else if (ev.type === 'test:fail') {
      fail++;
      const err = d.details?.error;
      const cause = err?.cause ?? err;
      // an error may carry an object without a string form (a null-prototype value): never crash the report on it
      const m = cause?.message ?? cause ?? 'failed';
      const msg = (typeof m === 'string' ? m : inspect(m)).split('\n').slice(0, 12).join('\n    ');
      yield `not ok ${d.name}${d.file ? ` (${d.file}${d.line ? `:${d.line}` : ''})` : ''}\n    ${msg}\n`;
    } else if (ev.type === 'test:stderr' || ev.type === 'test:stdout') {
      // a test's own output is kept in the TAP log only
    }
  }
  globalThis.__summary = { files: files.size, pass, fail, skip, todo };
  yield `${fail ? 'FAILED' : 'ok'}: ${files.size} test files, ${pass + fail + skip + todo} tests: ${pass} passed${fail ? `, ${fail} failed` : ''}${skip ? `, ${skip} skipped` : ''}${todo ? `, ${todo} todo` : ''}\n`;
}
