// Prints "N passed, N failed[, N skipped]" from vitest's JSON report.
import fs from 'node:fs';

const file = process.argv[2];
if (!fs.existsSync(file)) {
  console.log('0 passed, 1 failed');
  console.error(`no test report at ${file}`);
  process.exit(1);
}
const r = JSON.parse(fs.readFileSync(file, 'utf8'));
const skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(r.numFailedTests > 0 || r.numTotalTests === 0 ? 1 : 0);
