// Preloaded with `node --require ./bench/maxrss.cjs ...`: writes the process's peak resident set
// (KiB, worker threads included) to $CL_MAXRSS_FILE at exit, with no external `time` binary.
const { writeFileSync } = require('node:fs');
process.on('exit', () => {
  if (process.env.CL_MAXRSS_FILE) writeFileSync(process.env.CL_MAXRSS_FILE, String(process.resourceUsage().maxRSS));
});
